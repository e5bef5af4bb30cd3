// The official `openai` npm package (pinned in package-lock.json) against
// `cairn-cli serve` on a fixture model: list models, a non-streamed and a
// streamed chat completion (the same greedy reply), a stop sequence, a bad key.
// Run by run.sh: node openai_client.test.mjs CAIRN_CLI MODEL.gguf
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import OpenAI from 'openai';

const [cli, modelPath] = process.argv.slice(2);
const key = 'cairn-test-key';
const model = 'fixture';
let server;
let baseURL;

function startServer() {
  return new Promise((resolve, reject) => {
    server = spawn(cli, ['serve', '-m', modelPath, '--port', '0', '--api-key', key, '--alias', model, '-t', '1'],
                   { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1] + '/v1');
    });
    server.on('exit', (code) => reject(new Error(`cairn-cli serve exited with ${code} before listening`)));
  });
}

const client = () => new OpenAI({ baseURL, apiKey: key, maxRetries: 0, timeout: 120000 });
const conversation = [
  { role: 'system', content: 'You are brief.' },
  { role: 'user', content: 'Tell me about the mountains.' },
];

before(async () => { baseURL = await startServer(); });
after(() => { server.kill('SIGTERM'); });

test('models.list names the served model', async () => {
  const ids = [];
  for await (const m of client().models.list()) ids.push(m.id);
  assert.deepEqual(ids, [model]);
  const one = await client().models.retrieve(model);
  assert.equal(one.id, model);
});

let greedy;  // the non-streamed reply, compared with the streamed one

test('a non-streamed chat completion', async () => {
  const r = await client().chat.completions.create({ model, messages: conversation, max_tokens: 16, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 5);
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 16);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  greedy = r;
});

test('a streamed chat completion gives the same greedy reply', async () => {
  assert.ok(greedy, 'the non-streamed test ran first');
  const stream = await client().chat.completions.create({
    model, messages: conversation, max_tokens: 16, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    ++chunks;
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    content += choice.delta?.content ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  assert.ok(chunks >= 3, `only ${chunks} chunks`);
  assert.equal(content, greedy.choices[0].message.content);
  assert.equal(finish, greedy.choices[0].finish_reason);
  assert.equal(usage.completion_tokens, greedy.usage.completion_tokens);
});

test('a stop sequence ends the reply before it, streamed or not', async () => {
  const full = (await client().chat.completions.create({ model, messages: conversation, max_tokens: 40, temperature: 0 }))
    .choices[0].message.content;
  // Two ASCII letters from the second third of the greedy reply.
  let at = -1;
  for (let i = Math.floor(full.length / 3); i + 1 < full.length; ++i)
    if (/^[A-Za-z]{2}$/.test(full.slice(i, i + 2))) { at = i; break; }
  assert.ok(at >= 0, `no two ASCII letters in a row in the reply ${JSON.stringify(full)}`);
  const stop = full.slice(at, at + 2);
  const expected = full.slice(0, full.indexOf(stop));
  const r = await client().chat.completions.create({ model, messages: conversation, max_tokens: 40, temperature: 0, stop: [stop] });
  assert.equal(r.choices[0].message.content, expected);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const stream = await client().chat.completions.create({
    model, messages: conversation, max_tokens: 40, temperature: 0, stop, stream: true,
  });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(streamed, expected);
});

test('a wrong key is refused with 401', async () => {
  const wrong = new OpenAI({ baseURL, apiKey: 'not-the-key', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  await assert.rejects(
    wrong.chat.completions.create({ model, messages: conversation, max_tokens: 2 }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

test('another model name is 404', async () => {
  await assert.rejects(
    client().chat.completions.create({ model: 'gpt-4o', messages: conversation, max_tokens: 2 }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
});
