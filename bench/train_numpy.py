"""The trainer's model, objectives and optimiser in vectorised NumPy (the throughput baseline).

Reads what bench/train.mjs wrote (a directory of .npy files and meta.json): the encoded texts
(CSR), the examples, the batch sequence and the adapter's initial factors. Generates the frozen
base from the published specification itself (the counter-based generator, vectorised), caches the
frozen pre-activations z0 = W0 x + b0 per text as the JS trainer does, then runs the same AdamW
steps. Prints JSON: seconds for the steps (data preparation excluded, as in JS) and the loss of
every step, to compare with the JS run.
"""
import json, sys, time
import numpy as np

d = sys.argv[1]
meta = json.load(open(f"{d}/meta.json"))
L = lambda n: np.load(f"{d}/{n}.npy")
idx, val, indptr = L("idx"), L("val"), L("indptr")
ex_a, ex_b, ex_t, ex_w = L("a"), L("b"), L("target"), L("w")
# Per item, what the routing prior adds to the head's logits (zeros for the other objectives).
ex_off = L("offset")
batches = L("batches")
D, H, O, r = meta["D"], meta["H"], meta["O"], meta["rank"]
# The nonlinear path's factors (the buffer's prefix); the direct path's are zero and stay zero.
theta = L("init").astype(np.float64)[: D * r + H * r + r * H + O * r].copy()
s = meta["alpha"] / r
kind = meta["kind"]

def fmix(h):
    h = h ^ (h >> np.uint32(16)); h = h * np.uint32(0x85EBCA6B); h = h ^ (h >> np.uint32(13)); h = h * np.uint32(0xC2B2AE35); return h ^ (h >> np.uint32(16))

def uniform(seed, stream, i):
    with np.errstate(over="ignore"):
        h = fmix(np.uint32(seed) ^ (np.uint32(stream) * np.uint32(0x9E3779B1)))
        h = fmix(h ^ i.astype(np.uint32))
        h = fmix(h + np.uint32(0x632BE5AB))
    return (h >> np.uint32(8)).astype(np.float64) * 2.0**-23 - 1.0

def matrix(init, out, inn):
    o = np.arange(out, dtype=np.uint64)[:, None]; i = np.arange(inn, dtype=np.uint64)[None, :]
    return (init["scale"] * uniform(meta["seed"], init["stream"], (i * out + o).astype(np.uint32))).astype(np.float32).astype(np.float64)

init = meta["init"]
N = len(indptr) - 1
# Frozen projection, z0 = W0 x + b0, with W0 columns generated for the features used.
used = np.unique(idx)
cols = (used.astype(np.uint64)[:, None] * H + np.arange(H, dtype=np.uint64)[None, :]).astype(np.uint32)
col_scale = np.where((used >= meta["structureAt"]) & (used < meta["semanticAt"]), init["denseStructure"]["scale"], init["dense"]["scale"])[:, None]
W0u = (col_scale * uniform(meta["seed"], init["dense"]["stream"], cols)).astype(np.float32).astype(np.float64)  # [U, H]
pos = np.searchsorted(used, idx)
b0 = matrix(init["denseBias"], H, 1)[:, 0]
rows = np.repeat(np.arange(N), np.diff(indptr))
z0 = np.tile(b0, (N, 1))
np.add.at(z0, rows, val[:, None] * W0u[pos])
Wh = matrix(init["score"] if O == 1 else init["route"], O, H)

def dense_x(texts):
    X = np.zeros((len(texts), D))
    for k, t in enumerate(texts):
        a, b = indptr[t], indptr[t + 1]
        X[k, idx[a:b]] += val[a:b]
    return X

nA, nB, nHA = D * r, H * r, r * H
def views(v):
    At = v[:nA].reshape(D, r); B = v[nA:nA + nB].reshape(H, r); HA = v[nA + nB:nA + nB + nHA].reshape(r, H); HB = v[nA + nB + nHA:].reshape(O, r)
    return At, B, HA, HB

lr, wd, clip, b1, b2, eps = meta["lr"], meta["weightDecay"], meta["clipNorm"], 0.9, 0.999, 1e-8
m = np.zeros_like(theta); v2 = np.zeros_like(theta)
sp = lambda x: np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))
sig = lambda x: 0.5 * (1 + np.tanh(0.5 * x))

# Per step: the texts of the batch (both sides of pairs) as a dense block.
prepared = []
for bt in batches:
    texts = np.concatenate([ex_a[bt], ex_b[bt]]) if kind == "pair" else ex_a[bt]
    prepared.append((bt, texts, dense_x(texts)))

losses = []
t0 = time.perf_counter()
for step, (bt, texts, X) in enumerate(prepared, start=1):
    At, B, HA, HB = views(theta)
    n = len(bt)
    U = X @ At
    Z = z0[texts] + s * (U @ B.T)
    Hh = np.tanh(Z)
    V = Hh @ HA.T
    Y = Hh @ Wh.T + s * (V @ HB.T)
    w = ex_w[bt]
    if kind == "pair":
        dlt = Y[:n, 0] - Y[n:, 0]
        loss = np.sum(w * sp(-dlt))
        g = -w * sig(-dlt)
        gY = np.concatenate([g, -g])[:, None]
    elif kind == "route":
        Y = Y + ex_off[bt]
        mx = Y.max(axis=1, keepdims=True); e = np.exp(Y - mx); ssum = e.sum(axis=1, keepdims=True)
        lab = ex_t[bt].astype(np.int64)
        loss = np.sum(w * (mx[:, 0] + np.log(ssum[:, 0]) - Y[np.arange(n), lab]))
        P = e / ssum; P[np.arange(n), lab] -= 1
        gY = w[:, None] * P
    else:
        y = Y[:, 0]; t = ex_t[bt]
        loss = np.sum(w * (sp(y) - t * y))
        gY = (w * (sig(y) - t))[:, None]
    gY = gY / n
    gHB = s * gY.T @ V
    gV = s * gY @ HB
    gHA = gV.T @ Hh
    dH = gY @ Wh + gV @ HA
    dZ = dH * (1 - Hh * Hh)
    gB = s * dZ.T @ U
    gU = s * dZ @ B
    gAt = X.T @ gU
    grad = np.concatenate([gAt.ravel(), gB.ravel(), gHA.ravel(), gHB.ravel()])
    norm = np.sqrt(np.dot(grad, grad))
    if clip > 0 and norm > clip: grad *= clip / norm
    m = b1 * m + (1 - b1) * grad
    v2 = b2 * v2 + (1 - b2) * grad * grad
    c1 = 1 / (1 - b1 ** step); c2 = 1 / (1 - b2 ** step)
    theta = theta * (1 - lr * wd) - lr * (m * c1) / (np.sqrt(v2 * c2) + eps)
    losses.append(float(loss / n))
secs = time.perf_counter() - t0
print(json.dumps({"seconds": secs, "losses": losses, "examples": int(batches.size)}))
