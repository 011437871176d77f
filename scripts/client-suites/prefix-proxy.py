#!/usr/bin/env python3
"""A reverse proxy that lets a client suite written for a bare GoTrue or PostgREST (its routes at
`/`) reach onboard's Auth under `/auth/v1` (or REST under `--prefix /rest/v1`): each request to
`--listen` goes to `--target` + the prefix + its path, with `apikey` added (Supabase's gateway asks
for it; a bare GoTrue or PostgREST does not). Answers are
passed back as they are (redirects are not followed). For measuring, never for serving."""
import argparse
import http.client
import http.server
import urllib.parse

parser = argparse.ArgumentParser()
parser.add_argument("--listen", type=int, required=True)
parser.add_argument("--target", required=True, help="host:port of onboard")
parser.add_argument("--apikey", required=True)
parser.add_argument("--prefix", default="/auth/v1")
arguments = parser.parse_args()
host, port = arguments.target.split(":")
HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "host"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
        headers.setdefault("apikey", arguments.apikey)
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        connection.request(self.command, arguments.prefix + self.path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        connection.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = forward

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", arguments.listen), Proxy).serve_forever()
