// The parser's fuzz build compiles Parser, Message and Limits alone; HTTPResponse names the
// upgrade handler's protocol, which lives with the socket code (epoll, libcrypto).
public protocol WebSocketDelegate: AnyObject, Sendable {}
