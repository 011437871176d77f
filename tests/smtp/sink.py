#!/usr/bin/python3
"""A real SMTP server for the tests (aiosmtpd, Debian's python3-aiosmtpd): it accepts every
mail over TCP and writes each as one JSON file into a folder, for the tests to read.

    sink.py --dir DIR --port-file FILE [--mode plain|starttls|tls --cert PEM --key PEM]
            [--auth USER:PASSWORD] [--port N]

--mode starttls offers STARTTLS and refuses mail before it; tls speaks TLS from the first byte.
--auth requires AUTH (PLAIN or LOGIN) with these credentials. The bound port is written to
--port-file once the server listens (port 0, the default, picks a free one). Each message is
DIR/NNNNNN.json: {"from", "to", "tls", "user", "data"} where data is the raw message text.
"""
import argparse
import asyncio
import itertools
import json
import os
import ssl

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=["plain", "starttls", "tls"], default="plain")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--auth")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    counter = itertools.count(1)

    context = None
    if args.mode != "plain":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            user = None
            if isinstance(session.auth_data, LoginPassword):
                user = session.auth_data.login.decode()
            record = {
                "from": envelope.mail_from,
                "to": envelope.rcpt_tos,
                "tls": server.transport.get_extra_info("ssl_object") is not None,
                "user": user,
                "data": envelope.original_content.decode("utf-8", "replace"),
            }
            name = os.path.join(args.dir, "%06d.json" % next(counter))
            with open(name + ".tmp", "w", encoding="utf-8") as handle:
                json.dump(record, handle)
            os.replace(name + ".tmp", name)
            return "250 OK"

    def authenticator(server, session, envelope, mechanism, auth_data):
        expected_user, _, expected_password = args.auth.partition(":")
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == expected_user \
            and auth_data.password.decode() == expected_password
        return AuthResult(success=ok, auth_data=auth_data)

    def factory():
        kwargs = {"hostname": "sink.test", "decode_data": False}
        if args.mode == "starttls":
            kwargs.update(tls_context=context, require_starttls=True)
        if args.auth:
            kwargs.update(authenticator=authenticator, auth_required=True, auth_require_tls=args.mode == "starttls")
        return SMTP(Handler(), **kwargs)

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = loop.run_until_complete(
        loop.create_server(factory, host="127.0.0.1", port=args.port, ssl=context if args.mode == "tls" else None))
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as handle:
        handle.write(str(port))
    os.replace(args.port_file + ".tmp", args.port_file)
    loop.run_forever()


if __name__ == "__main__":
    main()
