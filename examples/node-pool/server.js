// An agent server whose wall is a worker thread, not its main thread: Node's built-in
// http server, one LLM call a turn (fetch to OPENAI_BASE_URL, the conversation kept per
// session), then ~30 CPU ms of password hashing (crypto.pbkdf2), which Node runs on
// libuv's thread pool — with UV_THREADPOOL_SIZE=1 a pool of one worker. The main thread
// only parses and answers; the one worker is the wall at ~1000 / 30 turns/s.
// Run: plimsoll ramp --cpus 2 --no-partition
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');

const base = (process.env.OPENAI_BASE_URL || 'http://127.0.0.1:8700/v1').replace(/\/$/, '');
const iterations = Number(process.env.HASH_ITERATIONS || 150000);
const conversations = new Map();

function hash(text) {
  return new Promise((resolve, reject) =>
    crypto.pbkdf2(text, 'plimsoll', iterations, 32, 'sha256', (e, k) => (e ? reject(e) : resolve(k.toString('hex')))));
}

async function turn(session, message) {
  const history = conversations.get(session) || [];
  conversations.set(session, history);
  history.push({ role: 'user', content: message });
  const r = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY || 'x'}` },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: history }),
  });
  const body = await r.json();
  const reply = body.choices[0].message.content || '';
  history.push({ role: 'assistant', content: reply });
  return { reply, digest: await hash(reply) };
}

http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.end('{"ok":true}');
      return;
    }
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', async () => {
      try {
        const { session, message } = JSON.parse(data);
        const out = await turn(session, message);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(out));
      } catch (e) {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: String(e) }));
      }
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
