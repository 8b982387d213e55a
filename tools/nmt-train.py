#!/usr/bin/python3
"""nmt-train.py — train a small transformer encoder-decoder and export it for fastsmt's `nmt`.

Usage: /usr/bin/python3 tools/nmt-train.py --source SRC --target TGT --out DIR [options]

DIR receives config.json, model.safetensors, src.vocab and tgt.vocab (one token per line; ids are
line numbers; <pad> <unk> <s> </s> come first). The C side (nmt/nmt.h) implements exactly the model
below, so any PyTorch model with these tensor names and shapes can be exported the same way.

The model (and its C twin):
  pre-norm transformer; x = emb[tok] * sqrt(d) + sinusoid(pos); each layer adds attention and a
  ReLU feed-forward to the residual stream after a LayerNorm; final LayerNorm on both stacks;
  output logits = x W_out^T + b_out over the target vocabulary.

Needs PyTorch only (Debian's python3-torch). safetensors is written by hand (8-byte little-endian
header length, JSON header, raw little-endian data), so no other package is needed.
"""
import argparse
import collections
import json
import math
import os
import random
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]


# ---------------------------------------------------------------------------------------------
# vocabulary and data

def read_lines(path, limit=None):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.append(line.split())
            if limit and len(out) >= limit:
                break
    return out


def build_vocab(sentences, min_count, max_size):
    counts = collections.Counter(w for s in sentences for w in s)
    words = [w for w, c in counts.most_common() if c >= min_count and w not in SPECIALS]
    if max_size:
        words = words[:max(0, max_size - len(SPECIALS))]
    return SPECIALS + words


def write_vocab(path, words):
    with open(path, "w", encoding="utf-8") as f:
        for w in words:
            f.write(w + "\n")


def encode(sent, index):
    return [index.get(w, UNK) for w in sent]


# ---------------------------------------------------------------------------------------------
# the model (names match the exported tensor names)

def sinusoid(n, d):
    """(n,d) position table: sin on even columns, cos on odd ones (the C side computes the same)."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    i = torch.arange(0, d, 2, dtype=torch.float32)
    ang = pos / torch.pow(10000.0, i / d)
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang[:, : d // 2])
    return pe


class Attention(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mem, mask):
        # x (B,T,d), mem (B,S,d), mask broadcastable to (B,h,T,S), True = may attend
        B, T, _ = x.shape
        S = mem.shape[1]
        q = self.q(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k = self.k(mem).view(B, S, self.h, self.dk).transpose(1, 2)
        v = self.v(mem).view(B, S, self.h, self.dk).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.dk)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (self.drop(att) @ v).transpose(1, 2).reshape(B, T, -1)
        return self.o(y)


class EncLayer(nn.Module):
    def __init__(self, d, heads, ff, dropout):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads, dropout)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.drop(self.attn(h, h, mask))
        return x + self.drop(self.ff2(self.drop(F.relu(self.ff1(self.ln2(x))))))


class DecLayer(nn.Module):
    def __init__(self, d, heads, ff, dropout):
        super().__init__()
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.self_attn = Attention(d, heads, dropout)
        self.cross = Attention(d, heads, dropout)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, y, mem, self_mask, src_mask):
        h = self.ln1(y)
        y = y + self.drop(self.self_attn(h, h, self_mask))
        y = y + self.drop(self.cross(self.ln2(y), mem, src_mask))
        return y + self.drop(self.ff2(self.drop(F.relu(self.ff1(self.ln3(y))))))


class Transformer(nn.Module):
    def __init__(self, cfg, dropout=0.0):
        super().__init__()
        d = cfg["d_model"]
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg["src_vocab_size"], d)
        self.tgt_embed = (self.src_embed if cfg["shared_vocab"]
                          else nn.Embedding(cfg["tgt_vocab_size"], d))
        for e in (self.src_embed, self.tgt_embed):
            nn.init.normal_(e.weight, 0.0, d ** -0.5)
        self.enc = nn.ModuleList(EncLayer(d, cfg["n_heads"], cfg["d_ff"], dropout)
                                 for _ in range(cfg["enc_layers"]))
        self.dec = nn.ModuleList(DecLayer(d, cfg["n_heads"], cfg["d_ff"], dropout)
                                 for _ in range(cfg["dec_layers"]))
        self.enc_ln, self.dec_ln = nn.LayerNorm(d), nn.LayerNorm(d)
        self.out = nn.Linear(d, cfg["tgt_vocab_size"])
        if cfg["tie_output"]:
            self.out.weight = self.tgt_embed.weight
        self.drop = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoid(1024, d), persistent=False)

    def embed(self, table, ids):
        x = table(ids) * math.sqrt(self.cfg["d_model"]) + self.pe[: ids.shape[1]]
        return self.drop(x)

    def encode(self, src):
        mask = (src != PAD)[:, None, None, :]
        x = self.embed(self.src_embed, src)
        for layer in self.enc:
            x = layer(x, mask)
        return self.enc_ln(x), mask

    def decode(self, tgt_in, mem, src_mask):
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).tril()[None, None]
        y = self.embed(self.tgt_embed, tgt_in)
        for layer in self.dec:
            y = layer(y, mem, causal, src_mask)
        return self.out(self.dec_ln(y))

    def forward(self, src, tgt_in):
        mem, mask = self.encode(src)
        return self.decode(tgt_in, mem, mask)


# ---------------------------------------------------------------------------------------------
# export (safetensors by hand)

def tensor_dict(model):
    sd = {}
    for name, t in model.state_dict().items():
        name = name.replace("self_attn.", "self.").replace("enc_ln.", "enc.ln.").replace(
            "dec_ln.", "dec.ln.")
        sd[name] = t.detach().to("cpu", torch.float32).contiguous()
    return sd


def read_safetensors(path):
    """The F32/I32 tensors of a safetensors file, by name (the reader twin of write_safetensors)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8: 8 + n])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        b, e = h["data_offsets"]
        raw = bytearray(data[8 + n + b: 8 + n + e])
        dt = {"F32": torch.float32, "I32": torch.int32}[h["dtype"]]
        out[name] = torch.frombuffer(raw, dtype=dt).reshape(h["shape"]).clone()
    return out


def load_exported(model, path):
    """Loads weights written by export() (inverse of tensor_dict's renaming)."""
    tensors = read_safetensors(path)
    sd = {}
    for name in model.state_dict():
        ext = name.replace("self_attn.", "self.").replace("enc_ln.", "enc.ln.").replace(
            "dec_ln.", "dec.ln.")
        sd[name] = tensors[ext]
    model.load_state_dict(sd)


def write_safetensors(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype == torch.float32:
            dt, raw = "F32", t.numpy().astype("<f4").tobytes()
        elif t.dtype in (torch.int32, torch.int64):
            dt, raw = "I32", t.to(torch.int32).numpy().astype("<i4").tobytes()
        else:
            raise ValueError("unsupported dtype %s" % t.dtype)
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)  # keep the data 8-byte aligned
    tmp = path + ".incomplete"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def export(model, out_dir, src_words, tgt_words, info):
    os.makedirs(out_dir, exist_ok=True)
    cfg = dict(model.cfg)
    cfg.update({"format": "fastsmt-nmt", "version": 1, "activation": "relu", "norm": "pre",
                "layer_norm_eps": 1e-5, "pad_id": PAD, "unk_id": UNK, "bos_id": BOS,
                "eos_id": EOS, "src_vocab": "src.vocab", "tgt_vocab": "tgt.vocab",
                "weights": "model.safetensors", "training": info})
    tensors = tensor_dict(model)
    # a diverged training leaves NaN or inf weights: fastsmt refuses such a model, so say it here
    bad = [k for k in sorted(tensors)
           if tensors[k].is_floating_point() and not bool(torch.isfinite(tensors[k]).all())]
    if bad:
        sys.exit("nmt-train: the trained weights hold NaN or inf (%s%s); nothing written to %s"
                 % (bad[0], " and %d more" % (len(bad) - 1) if len(bad) > 1 else "", out_dir))
    write_vocab(os.path.join(out_dir, "src.vocab"), src_words)
    write_vocab(os.path.join(out_dir, "tgt.vocab"), tgt_words)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1, sort_keys=True, allow_nan=False)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# training

def batches(pairs, max_tokens, shuffle):
    """Length-bucketed batches of at most max_tokens target+source tokens (padding counted)."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0])))
    out, cur, longest = [], [], 0
    for i in order:
        n = max(len(pairs[i][0]), len(pairs[i][1])) + 2
        if cur and (len(cur) + 1) * max(longest, n) > max_tokens:
            out.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, n)
    if cur:
        out.append(cur)
    if shuffle:
        random.shuffle(out)
    return out


def collate(pairs, idx, device):
    src = [pairs[i][0] + [EOS] for i in idx]
    tgt = [pairs[i][1] for i in idx]
    S = max(len(s) for s in src)
    T = max(len(t) for t in tgt) + 1
    s = torch.full((len(idx), S), PAD, dtype=torch.long)
    ti = torch.full((len(idx), T), PAD, dtype=torch.long)
    to = torch.full((len(idx), T), PAD, dtype=torch.long)
    for b, (x, y) in enumerate(zip(src, tgt)):
        s[b, : len(x)] = torch.tensor(x)
        ti[b, : len(y) + 1] = torch.tensor([BOS] + y)
        to[b, : len(y) + 1] = torch.tensor(y + [EOS])
    return s.to(device), ti.to(device), to.to(device)


@torch.no_grad()
def sentence_logprobs(model, pairs, device, max_tokens=4000):
    """Sum of natural-log probabilities of each target (with </s>), as `nmt score` computes it."""
    model.eval()
    res = [0.0] * len(pairs)
    for idx in batches(pairs, max_tokens, False):
        s, ti, to = collate(pairs, idx, device)
        lp = model(s, ti).log_softmax(-1).gather(-1, to.unsqueeze(-1)).squeeze(-1)
        lp = lp.masked_fill(to == PAD, 0.0).sum(-1)
        for b, i in enumerate(idx):
            res[i] = lp[b].item()
    return res


def train(args):
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device if args.device else
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    src_s = read_lines(args.source, args.limit)
    tgt_s = read_lines(args.target, args.limit)
    if len(src_s) != len(tgt_s):
        sys.exit("error: %s has %d lines but %s has %d" % (args.source, len(src_s), args.target,
                                                           len(tgt_s)))
    keep = [i for i in range(len(src_s))
            if 0 < len(src_s[i]) <= args.max_len and 0 < len(tgt_s[i]) <= args.max_len]
    src_s, tgt_s = [src_s[i] for i in keep], [tgt_s[i] for i in keep]
    init_cfg = None
    if args.init:
        # continue from an exported model: its vocabularies and shape win over the options
        with open(os.path.join(args.init, "config.json")) as f:
            init_cfg = json.load(f)
        with open(os.path.join(args.init, init_cfg.get("src_vocab", "src.vocab")), encoding="utf-8") as f:
            src_words = f.read().split("\n")[:-1]
        with open(os.path.join(args.init, init_cfg.get("tgt_vocab", "tgt.vocab")), encoding="utf-8") as f:
            tgt_words = f.read().split("\n")[:-1]
        args.shared_vocab = init_cfg["shared_vocab"]
        for k in ("d_model", "d_ff", "enc_layers", "dec_layers", "tie_output"):
            setattr(args, k, init_cfg[k])
        args.heads = init_cfg["n_heads"]
    elif args.shared_vocab:
        src_words = tgt_words = build_vocab(src_s + tgt_s, args.min_count, args.max_vocab)
    else:
        src_words = build_vocab(src_s, args.min_count, args.max_vocab)
        tgt_words = build_vocab(tgt_s, args.min_count, args.max_vocab)
    si = {w: i for i, w in enumerate(src_words)}
    ti = {w: i for i, w in enumerate(tgt_words)}
    pairs = [(encode(a, si), encode(b, ti)) for a, b in zip(src_s, tgt_s)]
    dev = []
    if args.dev_source and args.dev_target:
        dev = [(encode(a, si), encode(b, ti)) for a, b in
               zip(read_lines(args.dev_source), read_lines(args.dev_target))]
    cfg = {"d_model": args.d_model, "n_heads": args.heads, "d_ff": args.d_ff,
           "enc_layers": args.enc_layers, "dec_layers": args.dec_layers,
           "src_vocab_size": len(src_words), "tgt_vocab_size": len(tgt_words),
           "shared_vocab": bool(args.shared_vocab), "tie_output": bool(args.tie_output)}
    model = Transformer(cfg, args.dropout)
    if init_cfg:
        load_exported(model, os.path.join(args.init, init_cfg.get("weights", "model.safetensors")))
    model = model.to(device)
    nparams = sum(p.numel() for p in model.parameters())
    print("pairs %d, vocab %d/%d, parameters %d, device %s" %
          (len(pairs), len(src_words), len(tgt_words), nparams, device), flush=True)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / args.warmup, math.sqrt(args.warmup / (s + 1))))
    start, step = time.time(), 0
    last_export = start
    info = {"pairs": len(pairs), "parameters": nparams}
    for epoch in range(1, args.epochs + 1):
        model.train()
        tot, ntok, t0 = 0.0, 0, time.time()
        for idx in batches(pairs, args.batch_tokens, True):
            s, tin, tout = collate(pairs, idx, device)
            logits = model(s, tin)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), tout.view(-1),
                                   ignore_index=PAD, label_smoothing=args.label_smoothing,
                                   reduction="sum")
            n = int((tout != PAD).sum())
            opt.zero_grad()
            (loss / n).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            tot += loss.item()
            ntok += n
            if args.log_every and step % args.log_every == 0:
                print("step %d xent %.3f %.0f tok/s" % (step, tot / max(ntok, 1),
                                                    ntok / (time.time() - t0)), flush=True)
            if args.export_minutes and time.time() - last_export > args.export_minutes * 60:
                export(model, args.out, src_words, tgt_words, dict(info, steps=step))
                last_export = time.time()
            if args.steps and step >= args.steps:
                break
            if args.minutes and time.time() - start > args.minutes * 60:
                break
        msg = "epoch %d step %d train-xent %.3f time %.0fs" % (epoch, step, tot / max(ntok, 1),
                                                               time.time() - start)
        info.update({"epochs": epoch, "steps": step, "seconds": round(time.time() - start)})
        if dev:
            lp = sentence_logprobs(model, dev, device)
            n = sum(len(t) + 1 for _, t in dev)
            ppl = math.exp(-sum(lp) / n)
            msg += " dev-ppl %.2f" % ppl
            info["dev_ppl"] = round(ppl, 3)
        print(msg, flush=True)
        export(model.eval(), args.out, src_words, tgt_words, info)  # usable after every epoch
        if (args.steps and step >= args.steps) or (
                args.minutes and time.time() - start > args.minutes * 60):
            break
    model.eval()
    if args.golden:
        write_golden(model, args.golden, args.golden_pairs, si, ti, device)
    print("exported to %s" % args.out, flush=True)


# ---------------------------------------------------------------------------------------------
# golden values for the C tests

@torch.no_grad()
def write_golden(model, path, pairs_path, si, ti, device):
    """Logits of every target position, the encoder output and sentence scores of a few pairs
    (from a file of `source ||| target` lines), in a safetensors file the C tests read."""
    pairs = []
    with open(pairs_path, encoding="utf-8") as f:
        for line in f:
            a, b = line.rstrip("\n").split(" ||| ")
            pairs.append((encode(a.split(), si), encode(b.split(), ti)))
    s, tin, tout = collate(pairs, list(range(len(pairs))), device)
    mem, mask = model.encode(s)
    logits = model.decode(tin, mem, mask)
    lp = sentence_logprobs(model, pairs, device)
    g = {"src_ids": s.cpu(), "tgt_in": tin.cpu(), "tgt_out": tout.cpu(),
         "enc_out": mem.cpu(), "logits": logits.cpu(),
         "logprob": torch.tensor(lp, dtype=torch.float32)}
    # greedy decoding of every source, one sentence at a time, up to 2*len+10 words
    greedy = torch.full((len(pairs), 40), PAD, dtype=torch.int32)
    for b in range(len(pairs)):
        src = s[b: b + 1, : int((s[b] != PAD).sum())]
        m, mk = model.encode(src)
        out = [BOS]
        while len(out) < 40:
            nxt = int(model.decode(torch.tensor([out], device=device), m, mk)[0, -1].argmax())
            out.append(nxt)
            if nxt == EOS:
                break
        greedy[b, : len(out) - 1] = torch.tensor(out[1:], dtype=torch.int32)
    g["greedy"] = greedy
    write_safetensors(path, {k: (v.float() if v.is_floating_point() else v) for k, v in g.items()})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--out", required=True, help="model directory to write")
    p.add_argument("--dev-source")
    p.add_argument("--dev-target")
    p.add_argument("--init", help="continue training an exported model directory")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--enc-layers", type=int, default=3)
    p.add_argument("--dec-layers", type=int, default=3)
    p.add_argument("--shared-vocab", action="store_true")
    p.add_argument("--tie-output", action="store_true",
                   help="tie the output projection to the target embedding")
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--max-vocab", type=int, default=0)
    p.add_argument("--max-len", type=int, default=100, help="skip longer training pairs")
    p.add_argument("--limit", type=int, default=0, help="read only the first N pairs")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--steps", type=int, default=0, help="stop after N updates")
    p.add_argument("--minutes", type=float, default=0, help="stop after this much time")
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--export-minutes", type=float, default=0,
                   help="also export every this many minutes during an epoch")
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="")
    p.add_argument("--golden", help="write golden values for the C tests to this file")
    p.add_argument("--golden-pairs", help="`source ||| target` lines for --golden")
    train(p.parse_args())


if __name__ == "__main__":
    main()
