"""A small real HTTP server answering like Prometheus' query API, for tests of our code
that queries Prometheus (the real Prometheus is used by the integration tests).

/api/v1/query answers the value of the first `answers` key found in the query (None: an
empty vector; a list: several series; no key: `default`). /api/v1/query_range answers a
short matrix ramping up to that value. Requests are counted per query and per path.
"""

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class StandInPrometheus:
    def __init__(self, answers: dict | None = None, *, default: object = None) -> None:
        self.answers: dict[str, object] = dict(answers or {})
        self.default = default
        self.delay = 0.0
        self.status = 200
        self.requests: Counter[str] = Counter()  # per query
        self.paths: Counter[str] = Counter()  # per endpoint
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlparse(self.path)
                params = parse_qs(url.query)
                q = params.get("query", [""])[0]
                fake.requests[q] += 1
                fake.paths[url.path] += 1
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.status != 200:
                    body = {"status": "error", "errorType": "bad_data", "error": "parse error"}
                    return self._send(fake.status, body)
                value = next((v for k, v in fake.answers.items() if k in q), fake.default)
                if url.path.endswith("/query_range"):
                    return self._send(200, {"status": "success", "data": _matrix(params, value)})
                values = value if isinstance(value, list) else [] if value is None else [value]
                # A series may be {"metric": {...labels}, "value": v} to give its labels.
                result = [
                    {"metric": v["metric"], "value": [time.time(), str(v["value"])]}
                    if isinstance(v, dict)
                    else {"metric": {"pod": f"p{i}"}, "value": [time.time(), str(v)]}
                    for i, v in enumerate(values)
                ]
                data = {"resultType": "vector", "result": result}
                return self._send(200, {"status": "success", "data": data})

            def _send(self, code, body):
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _matrix(params: dict, value) -> dict:
    start, end = float(params["start"][0]), float(params["end"][0])
    step = float(params["step"][0])
    n = max(2, min(int((end - start) / step) + 1, 200))
    top = float(value if not isinstance(value, list) else value[0]) if value is not None else 0.0
    points = [[start + i * step, str(top * (0.2 + 0.8 * i / (n - 1)))] for i in range(n)]
    return {"resultType": "matrix", "result": [{"metric": {"lws": "vllm-chat"}, "values": points}]}
