"""An SMTP sink for the mail tests (tests/api/mail.rs), built on aiosmtpd.

Listens on HOST:PORT (port 0: any free port), accepts every message (but refuses recipients whose
address starts with "bounce", with a permanent 550) and writes each one as one JSON
file per message into DIR (written under a temporary name, then renamed, so a reader never sees
half a file). Prints "ready PORT" on standard output once it listens; runs until killed.

    python tests/mail_sink.py --host 127.0.0.1 --port 0 --dir /tmp/sink
"""

import argparse
import asyncio
import email
import itertools
import json
import os
from email import policy

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.counter = itertools.count(1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("bounce"):
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=policy.default)
        body = message.get_body(preferencelist=("plain",))
        record = {
            "envelope_from": envelope.mail_from,
            "envelope_to": list(envelope.rcpt_tos),
            "from": str(message["From"]),
            "to": str(message["To"]),
            "subject": str(message["Subject"]),
            "message_id": str(message["Message-ID"]),
            "content_type": message.get_content_type(),
            "text": body.get_content() if body is not None else None,
        }
        name = f"{os.getpid()}-{next(self.counter):06d}"
        tmp = os.path.join(self.directory, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.rename(tmp, os.path.join(self.directory, name + ".json"))
        return "250 Message accepted for delivery"


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    handler = Sink(args.dir)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler), args.host, args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"ready {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
