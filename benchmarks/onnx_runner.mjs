// Runs an ONNX policy export with onnxruntime-web in the page (hod.benchmarks.browser serves it).
// window.hodOrt.load(name), .run(name, obs, mask, batch) and .time(name, obs, mask, repeats).
import * as ort from "/ort/ort.wasm.min.mjs";

ort.env.wasm.wasmPaths = "/ort/";   // our server, never a CDN
ort.env.wasm.numThreads = 1;
const sessions = {};

async function load(name) {
  if (!sessions[name]) sessions[name] = await ort.InferenceSession.create(`/models/${name}.onnx`,
    {executionProviders: ["wasm"]});
  return sessions[name].inputNames.concat(sessions[name].outputNames);
}

function feeds(obs, mask, batch) {
  const width = obs.length / batch, actions = mask.length / batch;
  return {observation: new ort.Tensor("float32", Float32Array.from(obs), [batch, width]),
          action_mask: new ort.Tensor("int8", Int8Array.from(mask), [batch, actions])};
}

// obs: flat float list (batch x width), mask: flat 0/1 list; returns {action: [...], logits: [...]} flat
async function run(name, obs, mask, batch) {
  const out = await sessions[name].run(feeds(obs, mask, batch));
  return {action: Array.from(out.action.data, Number), logits: Array.from(out.logits.data)};
}

// Decision latency at batch 1: each of the rows (obs/mask flat, rows of one decision) in turn,
// `repeats` passes after one warm-up pass; returns seconds per decision.
async function time(name, obs, mask, rows, repeats) {
  const width = obs.length / rows, actions = mask.length / rows;
  const inputs = Array.from({length: rows}, (_, i) => feeds(obs.slice(i * width, (i + 1) * width),
    mask.slice(i * actions, (i + 1) * actions), 1));
  for (const f of inputs) await sessions[name].run(f);
  const t0 = performance.now();
  for (let r = 0; r < repeats; r++) for (const f of inputs) await sessions[name].run(f);
  return (performance.now() - t0) / 1000 / (repeats * rows);
}

window.hodOrt = {load, run, time, version: ort.env.versions ? ort.env.versions.web : null};
window.hodOrtReady = true;
