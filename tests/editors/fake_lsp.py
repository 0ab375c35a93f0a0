#!/usr/bin/env python3
# A stand-in for `evoc lsp` in test_nvim.py: speaks just enough LSP over
# stdio (initialize, shutdown, exit) and appends each method it receives,
# and its working folder's rootUri, to the log file named by argv[1].
import json
import sys


def read_message(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def send(stream, message):
    body = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stream.flush()


def main():
    log = open(sys.argv[1], "a")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        msg = read_message(stdin)
        if msg is None:
            return
        method = msg.get("method", "")
        extra = msg["params"].get("rootUri", "") if method == "initialize" else ""
        log.write(f"{method} {extra}".rstrip() + "\n")
        log.flush()
        if method == "initialize":
            send(stdout, {"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "shutdown":
            send(stdout, {"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in msg:
            send(stdout, {"jsonrpc": "2.0", "id": msg["id"], "result": None})


if __name__ == "__main__":
    main()
