// Decoding of ONNX messages from the wire format into the structs of onnx_proto.h.
// One function per message; unknown fields are skipped by wire type (forward compatible).
#include "compiler/frontend/onnx/onnx_proto.h"

#include "compiler/plan/error.h"

namespace ferrite::onnx {

namespace {

GraphProto parse_graph(WireReader r, int depth);

std::pair<std::string, std::string> parse_string_pair(WireReader r) {
  std::pair<std::string, std::string> kv;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        kv.first = r.read_string();
        break;
      case 2:
        kv.second = r.read_string();
        break;
      default:
        r.skip();
    }
  }
  return kv;
}

TypeProto::Dim parse_dim(WireReader r) {
  TypeProto::Dim d;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        d.has_value = true;
        d.value = r.read_int64();
        break;
      case 2:
        d.param = r.read_string();
        break;
      default:
        r.skip();
    }
  }
  return d;
}

void parse_shape(WireReader r, TypeProto* t) {
  t->has_shape = true;
  while (r.next()) {
    if (r.field() == 1) {
      t->dims.push_back(parse_dim(r.nested(r.read_bytes(), "TensorShapeProto.Dimension")));
    } else {
      r.skip();
    }
  }
}

void parse_tensor_type(WireReader r, TypeProto* t) {
  while (r.next()) {
    switch (r.field()) {
      case 1:
        t->elem_type = r.read_int32();
        break;
      case 2:
        parse_shape(r.nested(r.read_bytes(), "TensorShapeProto"), t);
        break;
      default:
        r.skip();
    }
  }
}

// The element type of a TypeProto.Sequence or TypeProto.Optional (field 1, a TypeProto), at
// most `depth` containers deep: a tensor fills `t`'s tensor fields; a sequence of tensors
// (an optional's element) sets elem_kind Sequence. Anything else leaves elem_kind None.
void parse_elem_type(WireReader r, TypeProto* t, int depth);

void parse_elem_type_proto(WireReader r, TypeProto* t, int depth) {
  while (r.next()) {
    if (r.field() == 1) {
      t->elem_kind = TypeProto::Kind::Tensor;
      parse_tensor_type(r.nested(r.read_bytes(), "TypeProto.Tensor"), t);
    } else if (r.field() == 4 && depth > 0) {
      parse_elem_type(r.nested(r.read_bytes(), "TypeProto.Sequence"), t, depth - 1);
      if (t->elem_kind == TypeProto::Kind::Tensor) t->elem_kind = TypeProto::Kind::Sequence;
    } else {
      r.skip();
    }
  }
}

void parse_elem_type(WireReader r, TypeProto* t, int depth) {
  while (r.next()) {
    if (r.field() == 1) {
      parse_elem_type_proto(r.nested(r.read_bytes(), "TypeProto"), t, depth);
    } else {
      r.skip();
    }
  }
}

TypeProto parse_type(WireReader r) {
  TypeProto t;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        t.kind = TypeProto::Kind::Tensor;
        parse_tensor_type(r.nested(r.read_bytes(), "TypeProto.Tensor"), &t);
        break;
      // Sequences and optionals: their element, one level of nesting (an optional
      // sequence); the other kinds' nested types are skipped.
      case 4:
        t.kind = TypeProto::Kind::Sequence;
        parse_elem_type(r.nested(r.read_bytes(), "TypeProto.Sequence"), &t, 0);
        break;
      case 5:
        t.kind = TypeProto::Kind::Map;
        r.skip();
        break;
      case 8:
        t.kind = TypeProto::Kind::SparseTensor;
        r.skip();
        break;
      case 9:
        t.kind = TypeProto::Kind::Optional;
        parse_elem_type(r.nested(r.read_bytes(), "TypeProto.Optional"), &t, 1);
        break;
      default:
        r.skip();
    }
  }
  return t;
}

ValueInfoProto parse_value_info(WireReader r) {
  ValueInfoProto v;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        v.name = r.read_string();
        break;
      case 2:
        v.type = parse_type(r.nested(r.read_bytes(), "TypeProto"));
        break;
      default:
        r.skip();
    }
  }
  return v;
}

// Fields with a value payload (2..11); split from parse_attribute to keep both short.
void parse_attribute_value(WireReader& r, AttributeProto* a, int depth) {
  switch (r.field()) {
    case 2:
      a->has_f = true;
      a->f = r.read_float();
      break;
    case 3:
      a->has_i = true;
      a->i = r.read_int64();
      break;
    case 4:
      a->has_s = true;
      a->s = r.read_string();
      break;
    case 5:
      a->t = std::make_unique<TensorProto>(parse_tensor(r.nested(r.read_bytes(), "TensorProto")));
      break;
    case 6:
      a->g = std::make_unique<GraphProto>(
          parse_graph(r.nested(r.read_bytes(), "GraphProto"), depth + 1));
      break;
    case 7:
      r.read_floats(&a->floats);
      break;
    case 8:
      r.read_int64s(&a->ints);
      break;
    case 9:
      a->strings.push_back(r.read_string());
      break;
    case 10:
      a->tensors.push_back(parse_tensor(r.nested(r.read_bytes(), "TensorProto")));
      break;
    case 11:
      a->graphs.push_back(parse_graph(r.nested(r.read_bytes(), "GraphProto"), depth + 1));
      break;
    default:
      r.skip();
  }
}

AttributeProto parse_attribute(WireReader r, int depth) {
  AttributeProto a;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        a.name = r.read_string();
        break;
      case 20:
        a.type = r.read_int32();
        break;
      case 21:
        a.ref_attr_name = r.read_string();
        break;
      case 22:
      case 23:
        ++a.sparse_count;
        r.skip();
        break;
      case 14:
        ++a.type_proto_count;
        a.tp = std::make_unique<TypeProto>(parse_type(r.nested(r.read_bytes(), "TypeProto")));
        break;
      case 15:
        ++a.type_proto_count;
        r.skip();
        break;
      default:
        parse_attribute_value(r, &a, depth);
    }
  }
  return a;
}

NodeProto parse_node(WireReader r, int depth) {
  NodeProto n;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        n.inputs.push_back(r.read_string());
        break;
      case 2:
        n.outputs.push_back(r.read_string());
        break;
      case 3:
        n.name = r.read_string();
        break;
      case 4:
        n.op_type = r.read_string();
        break;
      case 5:
        n.attributes.push_back(parse_attribute(r.nested(r.read_bytes(), "AttributeProto"), depth));
        break;
      case 7:
        n.domain = r.read_string();
        break;
      default:
        r.skip();
    }
  }
  return n;
}

GraphProto parse_graph(WireReader r, int depth) {
  if (depth > kMaxGraphNesting) {
    fail("onnx: subgraphs nested deeper than ", kMaxGraphNesting, " levels");
  }
  GraphProto g;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        g.nodes.push_back(parse_node(r.nested(r.read_bytes(), "NodeProto"), depth));
        break;
      case 2:
        g.name = r.read_string();
        break;
      case 5:
        g.initializers.push_back(parse_tensor(r.nested(r.read_bytes(), "TensorProto")));
        break;
      case 11:
        g.inputs.push_back(parse_value_info(r.nested(r.read_bytes(), "ValueInfoProto")));
        break;
      case 12:
        g.outputs.push_back(parse_value_info(r.nested(r.read_bytes(), "ValueInfoProto")));
        break;
      case 13:
        g.value_infos.push_back(parse_value_info(r.nested(r.read_bytes(), "ValueInfoProto")));
        break;
      case 15:
        ++g.sparse_initializer_count;
        r.skip();
        break;
      default:
        r.skip();
    }
  }
  return g;
}

std::pair<std::string, int64_t> parse_opset(WireReader r) {
  std::pair<std::string, int64_t> op;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        op.first = r.read_string();
        break;
      case 2:
        op.second = r.read_int64();
        break;
      default:
        r.skip();
    }
  }
  return op;
}

}  // namespace

TensorProto parse_tensor(WireReader r) {
  TensorProto t;
  while (r.next()) {
    switch (r.field()) {
      case 1:
        r.read_int64s(&t.dims);
        break;
      case 2:
        t.data_type = r.read_int32();
        break;
      case 3:
        t.has_segment = true;
        r.skip();
        break;
      case 4:
        r.read_floats(&t.float_data);
        break;
      case 5:
        r.read_int32s(&t.int32_data);
        break;
      case 6:
        t.string_data.push_back(r.read_string());
        break;
      case 7:
        r.read_int64s(&t.int64_data);
        break;
      case 8:
        t.name = r.read_string();
        break;
      case 9:
        t.has_raw_data = true;
        t.raw_data = r.read_bytes();
        break;
      case 10:
        r.read_doubles(&t.double_data);
        break;
      case 11:
        r.read_uint64s(&t.uint64_data);
        break;
      case 13:
        t.external_data.push_back(
            parse_string_pair(r.nested(r.read_bytes(), "StringStringEntryProto")));
        break;
      case 14:
        t.data_location = r.read_int32();
        break;
      default:
        r.skip();
    }
  }
  return t;
}

ModelProto parse_model(const uint8_t* data, size_t size) {
  ModelProto m;
  WireReader r(data, size, "ModelProto");
  while (r.next()) {
    switch (r.field()) {
      case 1:
        m.ir_version = r.read_int64();
        break;
      case 7:
        m.has_graph = true;
        m.graph = parse_graph(r.nested(r.read_bytes(), "GraphProto"), 0);
        break;
      case 8:
        m.opset_imports.push_back(parse_opset(r.nested(r.read_bytes(), "OperatorSetIdProto")));
        break;
      default:
        r.skip();
    }
  }
  return m;
}

}  // namespace ferrite::onnx
