"""The PyTorch models behind Ferrite's end-to-end tests (exported by export_models.py).

Each builder returns a ModelCase: the module (eval mode, seeded weights), example inputs
(one tuple per test data set), the ONNX names of inputs and outputs, the opset and any
dynamic axes. Builders expect the caller to have called torch.manual_seed, so every weight
and input is reproducible.
"""
import math
from dataclasses import dataclass, field

import torch
import torchvision
from torch import nn


@dataclass
class ModelCase:
    module: nn.Module
    input_sets: list  # of input tuples; the first one also traces the export
    input_names: list
    output_names: list
    opset: int
    dynamic_axes: dict = field(default_factory=dict)
    # More oracles, written as <name>.npy beside the model (numpy arrays).
    extra: dict = field(default_factory=dict)
    # Edits the exported onnx.ModelProto in place before it is saved again (None: none).
    rewrite: object = None


# ---- mlp ----------------------------------------------------------------------------------
def mlp():
    module = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                           nn.Linear(512, 10))
    # A symbolic batch `N` so the importer's symbolic-dimension handling is exercised; the
    # second data set (batch 3) runs the same model at another batch size.
    axes = {"x": {0: "N"}, "y": {0: "N"}}
    input_sets = [(torch.randn(1, 784),), (torch.randn(3, 784),)]
    return ModelCase(module.eval(), input_sets, ["x"], ["y"], 13, axes)


# ---- CNNs from torchvision ----------------------------------------------------------------
def randomize_batchnorm(module):
    """Fresh BatchNorms have weight 1, bias 0, mean 0, var 1 and, with torchvision's init,
    make the outputs of a deep CNN nearly 0 (or identical for every input), so a wrong
    kernel could still match. Random affine parameters and statistics make every channel
    count."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)  # variances must stay positive
    return module


def cnn(factory):
    module = randomize_batchnorm(factory(weights=None)).eval()
    return ModelCase(module, [(torch.randn(1, 3, 224, 224),)], ["input"], ["logits"], 13)


def resnet18():
    return cnn(torchvision.models.resnet18)


def mobilenet_v2():
    return cnn(torchvision.models.mobilenet_v2)


# ---- BERT-style encoder -------------------------------------------------------------------
class EncoderLayer(nn.Module):
    """Post-LayerNorm BERT layer: self-attention and a GELU feed-forward, each followed by
    a residual add and LayerNorm."""

    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, intermediate)
        self.ffn_out = nn.Linear(intermediate, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split_heads(self, x):  # [b, s, hidden] -> [b, heads, s, head_dim]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = (self.split_heads(f(x)) for f in (self.query, self.key, self.value))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.transpose(1, 2).reshape(x.shape)
        x = self.attn_norm(x + self.attn_out(context))
        hidden = nn.functional.gelu(self.ffn_in(x))  # exact GELU: exports through Erf
        return self.ffn_norm(x + self.ffn_out(hidden))


class Encoder(nn.Module):
    def __init__(self, layers=2, hidden=768, heads=12, intermediate=3072):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(hidden, heads, intermediate) for _ in range(layers))

    def forward(self, hidden_states, attention_mask):
        # As in Hugging Face's BERT: an int64 0/1 mask becomes an additive bias that drives
        # masked keys to ~0 probability after the softmax.
        mask = attention_mask[:, None, None, :].to(hidden_states.dtype)
        mask_bias = (1.0 - mask) * -10000.0
        for layer in self.layers:
            hidden_states = layer(hidden_states, mask_bias)
        return hidden_states


def bert512():
    """One BERT-base layer (12 heads of 64) at sequence 512, 64 tokens of padding: the
    attention that must not store [512 x 512] scores per head (fused_attention.h)."""
    module = randomize_layernorm(Encoder(layers=1)).eval()
    hidden_states = torch.randn(1, 512, 768)
    attention_mask = torch.ones(1, 512, dtype=torch.int64)
    attention_mask[:, 448:] = 0
    return ModelCase(module, [(hidden_states, attention_mask)],
                     ["hidden_states", "attention_mask"], ["output"], 17)


def randomize_layernorm(module):
    """LayerNorm starts as weight 1, bias 0; random values make its affine part count."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return module


def bert2(opset):
    module = randomize_layernorm(Encoder()).eval()
    hidden_states = torch.randn(1, 128, 768)
    attention_mask = torch.ones(1, 128, dtype=torch.int64)
    attention_mask[:, 100:] = 0  # padding: the last 28 tokens are masked out
    return ModelCase(module, [(hidden_states, attention_mask)],
                     ["hidden_states", "attention_mask"], ["output"], opset)


# ---- GCN ----------------------------------------------------------------------------------
class GCNLayer(nn.Module):
    """One GCN layer (Kipf & Welling): out = D^-1/2 (A + I) D^-1/2 (x W) + b."""

    def __init__(self, features_in, features_out):
        super().__init__()
        # Glorot weights as in PyG's GCNConv, and a bias small enough not to dominate the
        # aggregated messages (which averaging over ~20 neighbours makes small).
        self.linear = nn.Linear(features_in, features_out, bias=False)
        nn.init.xavier_uniform_(self.linear.weight)
        self.bias = nn.Parameter(torch.empty(features_out).uniform_(-0.01, 0.01))

    def forward(self, x, src, dst, edge_weight, self_weight):
        h = self.linear(x)
        n, f = h.shape
        # Message passing as scatter_add_ (index_add_ does not export; scatter_add_ exports
        # as Gather + ScatterElements(reduction=add) from opset 16).
        messages = h[src] * edge_weight.unsqueeze(1)
        out = torch.zeros(n, f).scatter_add_(0, dst.unsqueeze(1).expand(-1, f), messages)
        return out + h * self_weight.unsqueeze(1) + self.bias


class GCN(nn.Module):
    def __init__(self, features=128, hidden=128, classes=16):
        super().__init__()
        self.conv1 = GCNLayer(features, hidden)
        self.conv2 = GCNLayer(hidden, classes)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        # Symmetric normalization, computed in the model: degree counts the self loop.
        degree = torch.ones(x.shape[0]).scatter_add_(0, dst, torch.ones(dst.shape[0]))
        inv_sqrt = degree.pow(-0.5)
        edge_weight = inv_sqrt[src] * inv_sqrt[dst]
        self_weight = inv_sqrt * inv_sqrt
        h = torch.relu(self.conv1(x, src, dst, edge_weight, self_weight))
        return self.conv2(h, src, dst, edge_weight, self_weight)


def gcn(nodes=10000, edges=200000):
    x = torch.randn(nodes, 128)
    edge_index = torch.randint(0, nodes, (2, edges), dtype=torch.int64)
    return ModelCase(GCN().eval(), [(x, edge_index)], ["x", "edge_index"], ["out"], 16)


# ---- GraphSAGE ----------------------------------------------------------------------------
class SAGELayer(nn.Module):
    """One GraphSAGE layer with mean aggregation (Hamilton et al.; PyG's SAGEConv):
    out = W_self x + W_neigh mean_{j -> i} x_j + b."""

    def __init__(self, features_in, features_out):
        super().__init__()
        self.lin_self = nn.Linear(features_in, features_out)
        self.lin_neigh = nn.Linear(features_in, features_out, bias=False)

    def forward(self, x, src, dst, count):
        n, f = x.shape
        # The neighbours' features summed with scatter_add_ (as in GCNLayer), then divided
        # by the in-degree: the mean.
        summed = torch.zeros(n, f).scatter_add_(0, dst.unsqueeze(1).expand(-1, f), x[src])
        return self.lin_self(x) + self.lin_neigh(summed / count.unsqueeze(1))


class GraphSAGE(nn.Module):
    def __init__(self, features=128, hidden=128, classes=16):
        super().__init__()
        self.conv1 = SAGELayer(features, hidden)
        self.conv2 = SAGELayer(hidden, classes)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        # In-degrees, at least 1 so that a node without neighbours averages to zero.
        count = torch.zeros(x.shape[0]).scatter_add_(0, dst, torch.ones(dst.shape[0]))
        count = count.clamp(min=1)
        h = torch.relu(self.conv1(x, src, dst, count))
        return self.conv2(h, src, dst, count)


def graphsage(nodes=10000, edges=200000):
    x = torch.randn(nodes, 128)
    edge_index = torch.randint(0, nodes, (2, edges), dtype=torch.int64)
    return ModelCase(GraphSAGE().eval(), [(x, edge_index)], ["x", "edge_index"], ["out"], 16)


# ---- bert_dyn: a BERT encoder with HF BERT's run-time shapes -------------------------
class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in, self.ffn_out = nn.Linear(hidden, inter), nn.Linear(inter, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):  # HF: x.size()[:-1] + (heads, head_dim) -> Shape/Slice/Concat/Reshape
        new_shape = x.size()[:-1] + (self.heads, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.ffn_norm(x + self.ffn_out(nn.functional.gelu(self.ffn_in(x))))


class BertDyn(nn.Module):
    """HF BertModel's shape handling: position_ids and token_type_ids are buffers sliced to
    the run-time seq ([:, :seq], Slice with a Shape-derived end), token types expanded to
    [batch, seq] (Expand with a run-time shape), and the additive mask
    (1 - mask[:, None, None, :]) * finfo(float32).min."""

    def __init__(self, vocab=1000, hidden=128, heads=4, layers=2, inter=512, max_pos=128):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand(1, -1))
        self.register_buffer("token_type_ids", torch.zeros(1, max_pos, dtype=torch.long))
        self.layers = nn.ModuleList(BertLayer(hidden, heads, inter) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        batch, seq = input_ids.size()
        position_ids = self.position_ids[:, :seq]
        token_type_ids = self.token_type_ids[:, :seq].expand(batch, seq)
        x = self.word(input_ids) + self.token_type(token_type_ids) + self.pos(position_ids)
        x = self.emb_norm(x)
        mask = attention_mask[:, None, None, :].to(x.dtype)
        mask_bias = (1.0 - mask) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


# ---- gpt_dyn: a GPT-2 decoder with past key/values --------------------------------------
class GPTBlock(nn.Module):
    def __init__(self, hidden, heads, max_pos):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.c_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.c_fc, self.mlp_proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        # HF GPT2Attention's causal mask: a constant lower-triangular buffer, sliced per run.
        self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
                             .view(1, 1, max_pos, max_pos))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def split(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x, past_key, past_value):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.heads * self.head_dim, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        k = torch.cat((past_key, k), dim=-2)  # present: [b, h, past + seq, d]
        v = torch.cat((past_value, v), dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        q_len, k_len = q.size(-2), k.size(-2)
        causal = self.bias[:, :, k_len - q_len:k_len, :k_len]  # Slice, run-time starts/ends
        mask_value = torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype)
        w = torch.where(causal, w, mask_value)
        a = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (self.heads * self.head_dim,))
        x = x + self.c_proj(a)
        h = nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")  # gelu_new
        return x + self.mlp_proj(h), k, v


class GPTDyn(nn.Module):
    """HF GPT2LMHeadModel's shape handling: past_length = past_key.size(-2),
    position_ids = arange(past_length, past_length + seq) (Range with run-time start and
    limit)."""

    def __init__(self, vocab=1000, hidden=256, heads=4, layers=2, max_pos=128):
        super().__init__()
        self.n_layers, self.heads, self.head_dim = layers, heads, hidden // heads
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList(GPTBlock(hidden, heads, max_pos) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        # Untied LM head (GPT-2 ties it to wte): with random weights a tied head makes greedy
        # decoding repeat one token forever, which would make "tokens equal" a weak check.
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, *past):
        seq = input_ids.size(-1)
        past_length = past[0].size(-2)
        position_ids = torch.arange(past_length, past_length + seq, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, seq)
        x = self.wte(input_ids) + self.wpe(position_ids)
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.lm_head(self.ln_f(x)), *presents)

    def empty_past(self, batch, past=0):
        return [torch.zeros(batch, self.heads, past, self.head_dim)
                for _ in range(2 * self.n_layers)]


def bert_dyn():
    """[batch, seq] decided at run time: 31 data sets of 30 distinct (batch, seq), each row
    padded to its own length (attention_mask 0 past it), the first shape repeated last."""
    module = randomize_layernorm(BertDyn()).eval()
    input_sets = []
    for batch, seq in [(2, 7), (1, 1), (1, 8), (3, 5), (2, 16), (4, 33), (1, 128), (8, 64),
                       (5, 3), (2, 100), (3, 17), (1, 2), (1, 3), (1, 31), (1, 64), (2, 1),
                       (2, 2), (2, 9), (2, 40), (3, 1), (3, 12), (3, 24), (4, 4), (4, 10),
                       (5, 20), (6, 6), (6, 13), (7, 2), (8, 8), (16, 4), (2, 7)]:
        ids = torch.randint(0, 1000, (batch, seq))
        mask = torch.ones(batch, seq, dtype=torch.int64)
        for row, length in enumerate(torch.randint(1, seq + 1, (batch,)).tolist()):
            mask[row, length:] = 0
        input_sets.append((ids, mask))
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}}
    return ModelCase(module, input_sets, ["input_ids", "attention_mask"],
                     ["last_hidden_state"], 13, axes)


def gpt_dyn():
    """A greedy decode with past key/values of run-time length: a prompt with an empty past,
    then one token at a time, each data set's past being the presents torch computed for the
    one before (batch 1, then batch 2). The first set (past 3, seq 2) traces the export, so
    that no size of 0 or 1 is baked in."""
    module = randomize_layernorm(GPTDyn()).eval()
    input_sets = [(torch.randint(0, 1000, (1, 2)),
                   *[t.normal_() for t in module.empty_past(1, 3)])]
    for batch, prompt, steps in [(1, 5, 4), (2, 4, 2)]:
        ids, past = torch.randint(0, 1000, (batch, prompt)), module.empty_past(batch)
        for _ in range(steps + 1):
            input_sets.append((ids, *past))
            with torch.no_grad():
                logits, *past = module(ids, *past)
            ids = logits[:, -1:].argmax(-1)  # the greedy next token
    # The doors' tests generate 64 tokens greedily from a 5-token prompt (an empty past, then
    # each step's presents as the next step's past) and compare them with these.
    prompt = torch.randint(0, 1000, (1, 5))
    ids, past, tokens = prompt, module.empty_past(1), []
    for _ in range(64):
        with torch.no_grad():
            logits, *past = module(ids, *past)
        ids = logits[:, -1:].argmax(-1)
        tokens.append(int(ids))
    extra = {"greedy_prompt": prompt.numpy(), "greedy_tokens": torch.tensor(tokens).numpy()}
    names_in, names_out = ["input_ids"], ["logits"]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for i in range(module.n_layers):
        for kv in ("key", "value"):
            names_in.append(f"past_{kv}_{i}")
            names_out.append(f"present_{kv}_{i}")
            axes[names_in[-1]] = {0: "batch", 2: "past"}
            axes[names_out[-1]] = {0: "batch", 2: "total"}  # past + seq
    return ModelCase(module, input_sets, names_in, names_out, 13, axes, extra)


# ---- detect_tail: a detector's tail with NonMaxSuppression and NonZero ---------------------
class DetectTail(nn.Module):
    """Per anchor, a linear head gives box deltas and a score; the boxes are decoded, NMS
    keeps the best of the overlapping ones (NonMaxSuppression), and of those the confident
    ones are kept (NonZero): every size after NMS depends on the values."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 5)

    def forward(self, feats, anchors):
        out = self.head(feats)
        boxes = anchors + 0.5 * out[:, :4]
        scores = torch.sigmoid(out[:, 4])
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        kept_boxes, kept_scores = boxes[keep], scores[keep]
        confident = torch.nonzero(kept_scores > 0.5).squeeze(1)
        return kept_boxes[confident] * 2, kept_scores[confident], keep


def detect_tail():
    """N anchors decided at run time (N = 40, 7, 120, 1, 40): anchors are random boxes on a
    small canvas, so many overlap; the kept counts differ per data set."""
    module = DetectTail().eval()
    input_sets = []
    for n in [40, 7, 120, 1, 40]:
        corner = torch.rand(n, 2) * 8
        anchors = torch.cat([corner, corner + 1 + torch.rand(n, 2) * 3], dim=1)
        input_sets.append((torch.randn(n, 16), anchors))
    axes = {"feats": {0: "N"}, "anchors": {0: "N"}, "boxes": {0: "K"}, "scores": {0: "K"},
            "keep": {0: "M"}}
    return ModelCase(module, input_sets, ["feats", "anchors"], ["boxes", "scores", "keep"], 13,
                     axes)


# ---- if_loop_nms: an If, a Loop and a detector tail, each shaped at run time --------------
@torch.jit.script
def if_part(x, flag):
    # x: [12 * k]; flag picks [3k, 4] or [4k, 3]: the branches need different shapes.
    if bool(flag):
        y = x.reshape(-1, 4) * 2.0
    else:
        y = x.reshape(-1, 3) + 1.0
    return y.sum(dim=1)


@torch.jit.script
def loop_part(v, count):
    # v: [d]; the carried acc grows by one row per iteration: [1 + count, d].
    acc = v.unsqueeze(0)
    for i in range(int(count)):
        acc = torch.cat([acc, acc[-1:] * 0.5 + float(i)], dim=0)
    return acc


class IfLoopNMS(nn.Module):
    """Scripted control flow (exported as If and Loop) beside a detector's filter: NonZero
    on the scores, then NonMaxSuppression."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, flag, v, count, boxes, scores):
        keep = torch.nonzero(scores > 0.3).squeeze(1)
        b, s = self.proj(boxes[keep]) * 0.05 + boxes[keep], scores[keep]
        kept = torchvision.ops.nms(b, s, 0.5)
        return if_part(x, flag), loop_part(v, count), b[kept], s[kept]


def if_loop_nms():
    """Four data sets: each branch of the If, loops of 3, 0 and 6 iterations over carried
    rows of 5 and 2, and 20, 50 and 8 boxes."""
    module = IfLoopNMS().eval()
    input_sets = []
    for k, flag, d, count, n in [(2, True, 5, 3, 20), (2, False, 5, 3, 20), (3, True, 5, 0, 50),
                                 (1, False, 2, 6, 8)]:
        boxes = torch.rand(n, 2) * 50
        boxes = torch.cat([boxes, boxes + 5 + torch.rand(n, 2) * 30], dim=1)
        input_sets.append((torch.randn(12 * k), torch.tensor(flag), torch.randn(d),
                           torch.tensor(count, dtype=torch.long), boxes, torch.rand(n)))
    axes = {"x": {0: "x_len"}, "v": {0: "v_len"}, "boxes": {0: "num_boxes"},
            "scores": {0: "num_boxes"}, "if_out": {0: "if_rows"},
            "loop_out": {0: "loop_rows", 1: "v_len"}, "det_boxes": {0: "num_det"},
            "det_scores": {0: "num_det"}}
    return ModelCase(module, input_sets, ["x", "flag", "v", "count", "boxes", "scores"],
                     ["if_out", "loop_out", "det_boxes", "det_scores"], 13, axes)


# ---- mlp_4bit: an LLM's feed-forward block with 4-bit weights (MatMulNBits) ---------------
class SwiGLU(nn.Module):
    def __init__(self, hidden, inner):
        super().__init__()
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)
        self.down = nn.Linear(inner, hidden, bias=False)

    def forward(self, x):
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))


def quantize_4bit(w, block):
    """Blockwise asymmetric 4-bit codes of w [N, K] along K (as onnxruntime's
    MatMulNBitsQuantizer writes them): codes [N, K / block, block], scales and integer zero
    points [N, K / block]; the dequantized weights (codes - zp) * scale in float32."""
    n, k = w.shape
    blocks = w.reshape(n, k // block, block)
    lo = torch.clamp(blocks.min(dim=2).values, max=0.0)
    hi = torch.clamp(blocks.max(dim=2).values, min=0.0)
    scale = torch.clamp((hi - lo) / 15.0, min=1e-8)
    zp = torch.clamp(torch.round(-lo / scale), 0, 15)
    codes = torch.clamp(torch.round(blocks / scale[:, :, None]) + zp[:, :, None], 0, 15)
    deq = ((codes - zp[:, :, None]) * scale[:, :, None]).reshape(n, k)
    return codes.to(torch.uint8), scale, zp.to(torch.uint8), deq


def nbits_rewrite(layers, block):
    """Replaces each MatMul by a weight of `layers` (their dequantized weights, transposed,
    are the initializers the export wrote) with com.microsoft MatMulNBits on the codes."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    def rewrite(model):
        graph = model.graph
        inits = {t.name: t for t in graph.initializer}
        for node in graph.node:
            if node.op_type != "MatMul" or node.input[1] not in inits:
                continue
            w = numpy_helper.to_array(inits[node.input[1]])
            match = [q for q in layers if q[3].shape == w.T.shape and np.array_equal(q[3], w.T)]
            if not match:
                continue
            codes, scale, zp, deq = match[0]
            n, k = deq.shape
            packed = (codes[:, :, 0::2] | (codes[:, :, 1::2] << 4)).astype(np.uint8)
            zp_packed = np.zeros((n, (k // block + 1) // 2), np.uint8)
            for b in range(k // block):
                zp_packed[:, b // 2] |= (zp[:, b] << (4 * (b % 2))).astype(np.uint8)
            base = node.input[1]
            graph.initializer.remove(inits[base])
            graph.initializer.extend([
                numpy_helper.from_array(packed, base + "_codes"),
                numpy_helper.from_array(scale.reshape(-1).astype(np.float32), base + "_scales"),
                numpy_helper.from_array(zp_packed.reshape(-1), base + "_zp")])
            new = helper.make_node("MatMulNBits", [node.input[0], base + "_codes", base + "_scales",
                                                   base + "_zp"], list(node.output),
                                   domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
            node.CopyFrom(new)
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        onnx.checker.check_model(model)
    return rewrite


def mlp_4bit():
    """A feed-forward block of a small LLM (hidden 1024, inner 2816, SwiGLU) whose weights are
    4-bit blockwise codes: torch runs it with the dequantized weights (the oracle), the ONNX
    model holds the codes in MatMulNBits. One token (a decode step) and 20 (a prompt: rows in
    groups of 4 against each decoded vector of codes)."""
    hidden, inner, block = 1024, 2816, 32
    module = SwiGLU(hidden, inner).eval()
    layers = []
    with torch.no_grad():
        for lin in (module.gate, module.up, module.down):
            codes, scale, zp, deq = quantize_4bit(lin.weight, block)
            lin.weight.copy_(deq)
            layers.append((codes.numpy(), scale.numpy(), zp.numpy(), deq.numpy()))
    input_sets = [(torch.randn(1, hidden),), (torch.randn(20, hidden),)]
    return ModelCase(module, input_sets, ["x"], ["y"], 17, {"x": {0: "tokens"}, "y": {0: "tokens"}},
                     rewrite=nbits_rewrite(layers, block))


MODELS = {
    "mlp": mlp,
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "bert2_op13": lambda: bert2(13),
    "bert2_op17": lambda: bert2(17),
    "bert512": bert512,
    "gcn": gcn,
    "graphsage": graphsage,
    "bert_dyn": bert_dyn,
    "gpt_dyn": gpt_dyn,
    "detect_tail": detect_tail,
    "if_loop_nms": if_loop_nms,
    "mlp_4bit": mlp_4bit,
}
