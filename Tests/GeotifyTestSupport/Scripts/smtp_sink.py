"""An SMTP server for Geotify's e-mail delivery tests, built on aiosmtpd.

Accepts every message and writes it to DIRECTORY as NNNN.json: the envelope sender and
recipients, whether the session was encrypted and authenticated, and the message (base64).
With --tls starttls it offers and requires STARTTLS; with --tls implicit it speaks TLS
from the first byte; with --login USER:PASSWORD it requires that login (after TLS).
Says "listening on 127.0.0.1:PORT" on its standard output once it serves. Runs until
killed.
"""
import argparse
import base64
import json
import os
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            number = self.count
        record = {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "login": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
            "data": base64.b64encode(envelope.original_content or envelope.content).decode(),
        }
        path = os.path.join(self.directory, "%04d.json" % number)
        with open(path + ".tmp", "w") as file:
            json.dump(record, file)
        os.rename(path + ".tmp", path)
        return "250 2.0.0 stored as %d" % number


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--directory", required=True)
    parser.add_argument("--tls", choices=["none", "starttls", "implicit"], default="none")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--login")
    arguments = parser.parse_args()

    def authenticate(server, session, envelope, mechanism, auth_data):
        user, password = arguments.login.split(":", 1)
        if isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password:
            return AuthResult(success=True, auth_data=auth_data)
        return AuthResult(success=False, handled=False)

    options = {}
    if arguments.tls != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments.cert, arguments.key)
        if arguments.tls == "starttls":
            options.update(tls_context=context, require_starttls=True)
        else:
            options.update(ssl_context=context)
    if arguments.login:
        options.update(authenticator=authenticate, auth_require_tls=arguments.tls == "starttls")
    # start() gives up after ready_timeout (5 s by default), which a busy machine running
    # the suite can exceed; the test waits 20 s for the line below.
    controller = Controller(Sink(arguments.directory), hostname="127.0.0.1", port=arguments.port, ready_timeout=20, **options)
    # start() returns once the server has answered a connection of its own; only then
    # is the port this server's (another process may have held it, and start() raises).
    controller.start()
    print("listening on 127.0.0.1:%d" % arguments.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
