"""A deliberately naive LLM gateway for faultline's own tests: three tries per client request,
the first two on the first upstream, ignoring Retry-After; then whatever came last is passed on,
streamed. It declares two upstream attempts (gateway.json), so GW-001 and GW-002 catch it.

Usage: naive_gateway.py LISTEN_PORT HOST:PORT [HOST:PORT...]
"""
import http.client
import http.server
import sys

UPSTREAMS = [u.rsplit(":", 1) for u in sys.argv[2:]]
TRIES = 3


class Gateway(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        for attempt in range(TRIES):
            host, port = UPSTREAMS[min(attempt // 2, len(UPSTREAMS) - 1)]
            upstream = http.client.HTTPConnection(host, int(port), timeout=30)
            try:
                upstream.request("POST", self.path, body, headers)
                response = upstream.getresponse()
            except OSError:
                upstream.close()
                if attempt + 1 < TRIES:
                    continue
                self.send_error(502)
                return
            if (response.status == 429 or response.status >= 500) and attempt + 1 < TRIES:
                response.read()
                upstream.close()
                continue
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                self.close_connection = True
            upstream.close()
            return


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Gateway).serve_forever()
