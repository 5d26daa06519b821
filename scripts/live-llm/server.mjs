// A small chat server over node-llama-cpp for the live check (scripts/live-llm.sh): it speaks the
// OpenAI-compatible protocol (POST /v1/chat/completions, GET /v1/models) and Ollama's
// (POST /api/chat, GET /api/tags), on 127.0.0.1 only, one request at a time.
//
// JSON output is constrained with llama.cpp's grammars: `response_format` `json_schema` and an
// Ollama `format` schema become a JSON-schema grammar, `json_object` and `format: "json"` the
// generic JSON grammar. A schema the grammar generator cannot handle is answered with 400, as a
// server without schema decoding would, so the client's fallback to JSON mode is exercised.
//
// Every answered request appends one line of timings to --stats (prompt and completion tokens,
// milliseconds to the first token and in total), from which the script computes tokens/s.
//
// Usage: node server.mjs --model MODEL.gguf --port 0 --stats stats.jsonl [--threads 1]

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { getLlama, LlamaChatSession } from "node-llama-cpp";

function arg(name, fallback) {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : fallback;
}

const modelPath = arg("model");
const port = Number(arg("port", "0"));
const statsPath = arg("stats", "stats.jsonl");
const threads = Number(arg("threads", "1"));
const modelName = arg("name", path.basename(modelPath ?? "model", ".gguf"));
if (!modelPath) {
    console.error("--model MODEL.gguf is required");
    process.exit(2);
}

const llama = await getLlama({ build: "never", gpu: false });
const loadStarted = Date.now();
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 4096, threads });
const sequence = context.getSequence();
const loadMs = Date.now() - loadStarted;

// One request at a time: the model has one context sequence.
let queue = Promise.resolve();
function serially(task) {
    const next = queue.then(task, task);
    queue = next.catch(() => {});
    return next;
}

// JSON Schema's `anyOf` (how a nullable field is written) is the grammar generator's `oneOf`.
function toGrammarSchema(schema) {
    if (Array.isArray(schema)) return schema.map(toGrammarSchema);
    if (schema === null || typeof schema !== "object") return schema;
    const out = {};
    for (const [key, value] of Object.entries(schema)) {
        out[key === "anyOf" ? "oneOf" : key] = toGrammarSchema(value);
    }
    return out;
}

class BadRequest extends Error {}

async function grammarFor(kind) {
    if (kind === null) return undefined;
    if (kind === "json") return llama.getGrammarFor("json");
    try {
        return await llama.createGrammarForJsonSchema(toGrammarSchema(kind));
    } catch (error) {
        throw new BadRequest(`unsupported JSON schema: ${error.message}`);
    }
}

// The conversation as node-llama-cpp's chat history, and the last user message to prompt with.
function conversation(messages) {
    if (!Array.isArray(messages) || messages.length === 0) {
        throw new BadRequest("`messages` must be a non-empty list");
    }
    const last = messages[messages.length - 1];
    if (last.role !== "user") throw new BadRequest("the last message must be the user's");
    const history = messages.slice(0, -1).map((m) => {
        switch (m.role) {
            case "system": return { type: "system", text: String(m.content) };
            case "user": return { type: "user", text: String(m.content) };
            case "assistant": return { type: "model", response: [String(m.content)] };
            default: throw new BadRequest(`unknown role ${m.role}`);
        }
    });
    return { history, prompt: String(last.content) };
}

async function complete({ messages, grammar, temperature, topP, seed, maxTokens }) {
    const { history, prompt } = conversation(messages);
    await sequence.clearHistory();
    const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
    session.setChatHistory(history);
    const before = sequence.tokenMeter.getState();
    const started = Date.now();
    let firstToken = null;
    const text = await session.prompt(prompt, {
        grammar: await grammarFor(grammar),
        temperature,
        topP,
        seed,
        maxTokens: maxTokens ?? 512,
        onToken: () => { firstToken ??= Date.now(); },
    });
    const ended = Date.now();
    const after = sequence.tokenMeter.getState();
    session.dispose({ disposeSequence: false });
    const usage = {
        prompt_tokens: after.usedInputTokens - before.usedInputTokens,
        completion_tokens: after.usedOutputTokens - before.usedOutputTokens,
    };
    fs.appendFileSync(statsPath, JSON.stringify({
        ...usage,
        first_token_ms: (firstToken ?? ended) - started,
        total_ms: ended - started,
        grammar: grammar === null ? "none" : grammar === "json" ? "json" : "schema",
    }) + "\n");
    return { text, usage };
}

function send(res, status, body) {
    const text = JSON.stringify(body);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    res.end(text);
}

async function readJson(req) {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    try {
        return JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
        throw new BadRequest("the body is not JSON");
    }
}

async function openai(body) {
    const format = body.response_format?.type;
    const grammar = format === "json_schema" ? body.response_format.json_schema?.schema
        : format === "json_object" ? "json" : null;
    const { text, usage } = await complete({
        messages: body.messages, grammar,
        temperature: body.temperature, topP: body.top_p, seed: body.seed, maxTokens: body.max_tokens,
    });
    return {
        id: `chatcmpl-${Date.now()}`,
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
}

async function ollama(body) {
    const grammar = body.format === "json" ? "json"
        : body.format && typeof body.format === "object" ? body.format : null;
    const options = body.options ?? {};
    const { text, usage } = await complete({
        messages: body.messages, grammar,
        temperature: options.temperature, topP: options.top_p, seed: options.seed, maxTokens: options.num_predict,
    });
    return {
        model: body.model,
        created_at: new Date().toISOString(),
        message: { role: "assistant", content: text },
        done: true,
        prompt_eval_count: usage.prompt_tokens,
        eval_count: usage.completion_tokens,
    };
}

const server = http.createServer(async (req, res) => {
    try {
        if (req.method === "GET" && req.url === "/v1/models") {
            return send(res, 200, { object: "list", data: [{ id: modelName, object: "model" }] });
        }
        if (req.method === "GET" && req.url === "/api/tags") {
            return send(res, 200, { models: [{ name: modelName, model: modelName }] });
        }
        if (req.method === "POST" && req.url === "/v1/chat/completions") {
            const body = await readJson(req);
            return send(res, 200, await serially(() => openai(body)));
        }
        if (req.method === "POST" && req.url === "/api/chat") {
            const body = await readJson(req);
            return send(res, 200, await serially(() => ollama(body)));
        }
        send(res, 404, { error: `no endpoint ${req.method} ${req.url}` });
    } catch (error) {
        const status = error instanceof BadRequest ? 400 : 500;
        send(res, status, { error: { message: String(error.message ?? error) } });
    }
});

server.listen(port, "127.0.0.1", () => {
    console.log(`listening on 127.0.0.1:${server.address().port} (model ${modelName}, loaded in ${loadMs} ms)`);
});
