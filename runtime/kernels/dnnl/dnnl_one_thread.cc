#include "runtime/kernels/dnnl/dnnl_one_thread.h"

#include "runtime/kernels/dnnl/dnnl_steps.h"

namespace ferrite {
namespace onednn {
namespace {

const dnnl_memory_desc_t& md_of(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int index) {
  return *dnnl_primitive_desc_query_md(pd, what, index);
}

// The op descriptor of a (de)convolution or matmul with the layouts `pd` resolved in place
// of the ones it was asked for ("any"), so that the new primitive keeps them.
template <class Desc>
Desc resolved(const_dnnl_primitive_desc_t pd, dnnl_query_t what) {
  const Desc* d = nullptr;
  dnnl::error::wrap_c_api(dnnl_primitive_desc_query(pd, what, 0, &d), "query op desc");
  Desc copy = *d;
  copy.src_desc = md_of(pd, dnnl_query_src_md, 0);
  copy.weights_desc = md_of(pd, dnnl_query_weights_md, 0);
  copy.bias_desc = md_of(pd, dnnl_query_weights_md, 1);
  copy.dst_desc = md_of(pd, dnnl_query_dst_md, 0);
  return copy;
}

bool same_md(const_dnnl_primitive_desc_t a, const_dnnl_primitive_desc_t b, dnnl_query_t what,
             int index) {
  return dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(a, what, index),
                                dnnl_primitive_desc_query_md(b, what, index)) != 0;
}

// A new primitive descriptor like `pd`, or null when oneDNN has none.
dnnl_primitive_desc_t remake_desc(const_dnnl_primitive_desc_t pd) {
  dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
  dnnl::error::wrap_c_api(dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind),
                          "query primitive kind");
  const_dnnl_primitive_attr_t attr = nullptr;
  dnnl::error::wrap_c_api(dnnl_primitive_desc_get_attr(pd, &attr), "query attributes");
  dnnl_engine_t engine = cpu_engine().get();
  dnnl_primitive_desc_t made = nullptr;
  dnnl_status_t status = dnnl_unimplemented;
  if (kind == dnnl_reorder) {
    status = dnnl_reorder_primitive_desc_create(&made, &md_of(pd, dnnl_query_src_md, 0), engine,
                                                &md_of(pd, dnnl_query_dst_md, 0), engine, attr);
  } else if (kind == dnnl_convolution || kind == dnnl_deconvolution) {
    const dnnl_convolution_desc_t d = resolved<dnnl_convolution_desc_t>(
        pd, kind == dnnl_convolution ? dnnl_query_convolution_d : dnnl_query_deconvolution_d);
    status = dnnl_primitive_desc_create(&made, &d, attr, engine, nullptr);
  } else if (kind == dnnl_matmul) {
    const dnnl_matmul_desc_t d = resolved<dnnl_matmul_desc_t>(pd, dnnl_query_matmul_d);
    status = dnnl_primitive_desc_create(&made, &d, attr, engine, nullptr);
  }
  if (status != dnnl_success) return nullptr;
  for (dnnl_query_t what : {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md}) {
    if (!same_md(pd, made, what, 0)) {
      dnnl_primitive_desc_destroy(made);
      return nullptr;
    }
  }
  return made;
}

}  // namespace

dnnl::primitive remake_primitive(const dnnl::primitive& p, dnnl::memory::desc* scratchpad) {
  dnnl_primitive_desc_t made = remake_desc(p.get_primitive_desc());
  if (!made) return dnnl::primitive();
  try {
    dnnl::primitive copy(made);
    *scratchpad = dnnl::memory::desc(md_of(made, dnnl_query_scratchpad_md, 0));
    dnnl_primitive_desc_destroy(made);
    return copy;
  } catch (...) {
    dnnl_primitive_desc_destroy(made);
    throw;
  }
}

}  // namespace onednn
}  // namespace ferrite
