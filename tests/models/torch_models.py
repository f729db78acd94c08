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


MODELS = {
    "mlp": mlp,
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "bert2_op13": lambda: bert2(13),
    "bert2_op17": lambda: bert2(17),
    "gcn": gcn,
    "graphsage": graphsage,
}
