"""The HTTP side of the examples' Python hooks, so each hook.py holds only its controller's logic.

serve({"/sync": fn}) listens on 127.0.0.1 (the port is the first command-line argument, default 8080) and answers
each POST to a known path with fn(request) as JSON; a request the function cannot handle gets a 500 with a plain-text
reason, which the engine puts into the SyncError Event on the parent. Python 3 standard library only.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(hooks, name="hook.py"):
    """Serves the hooks (path -> function of the parsed request, returning the answer) until interrupted."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            hook = hooks.get(self.path)
            if hook is None:
                self.reply(404, "text/plain", f"no hook at {self.path}".encode())
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                body = json.dumps(hook(request)).encode()
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                # Plain text reads best in the SyncError Event the engine records.
                self.reply(500, "text/plain", f"cannot answer {self.path}: {e!r}".encode())
                return
            self.reply(200, "application/json", body)

        def reply(self, code, content_type, body):
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            # One line per call on stderr, without the client address (always the local engine).
            sys.stderr.write(f"{name}: " + (fmt % args) + "\n")

    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    paths = " and ".join(f"http://127.0.0.1:{port}{path}" for path in hooks)
    print(f"{name}: serving {paths}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
