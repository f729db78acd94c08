// The memory dumps: a table per Temp buffer and a timeline picture of the pool.
#include "compiler/memory/memory_dump.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

std::string buffer_text(const Plan& plan, int32_t id) {
  return str_cat("b", id, " '", plan.buffers[id].name, "'");
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The binary unit (1, 1024, 1024^2, ...) for byte labels up to `bytes`, and its name.
std::pair<double, const char*> byte_unit(double bytes) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double unit = 1;
  int u = 0;
  while (bytes >= 1024 * unit && u < 4) {
    unit *= 1024;
    ++u;
  }
  return {unit, names[u]};
}

std::string ratio_text(int64_t pool, int64_t lower_bound) {
  return lower_bound > 0 ? fixed(static_cast<double>(pool) / static_cast<double>(lower_bound), 4)
                         : "-";
}

// Per temp (by index into m.temps): the in-place pair that gave it its bytes, and the one
// it gave its bytes to (-1: none).
struct Partners {
  std::vector<int> takes, gives;
};

Partners partners(const TempMemory& m) {
  std::map<int32_t, int> temp_of;
  for (size_t t = 0; t < m.temps.size(); ++t) temp_of[m.temps[t]] = static_cast<int>(t);
  Partners p{std::vector<int>(m.temps.size(), -1), std::vector<int>(m.temps.size(), -1)};
  for (size_t i = 0; i < m.in_place.size(); ++i) {
    p.takes[temp_of.at(m.in_place[i].output)] = static_cast<int>(i);
    p.gives[temp_of.at(m.in_place[i].input)] = static_cast<int>(i);
  }
  return p;
}

std::string partner_text(const Plan& plan, const TempMemory& m, const Partners& p, size_t t) {
  std::string s;
  if (p.takes[t] >= 0) {
    const InPlacePair& q = m.in_place[p.takes[t]];
    s += str_cat("takes the bytes of ", buffer_text(plan, q.input), " at step ", q.step);
  }
  if (p.gives[t] >= 0) {
    const InPlacePair& q = m.in_place[p.gives[t]];
    s += str_cat(s.empty() ? "" : "; ", "gives its bytes to ", buffer_text(plan, q.output),
                 " at step ", q.step);
  }
  return s;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The smallest of 0.1, 0.2, 0.5, 1, 2, 5, 10, ... (times `unit`) giving at most
// `max_ticks` ticks over `span`.
double tick_step(double span, int max_ticks, double unit) {
  for (double step = unit / 10;; step *= 10) {
    for (double f : {1.0, 2.0, 5.0})
      if (span / (step * f) <= max_ticks) return step * f;
  }
}

// Geometry of the picture: plot area and the step/byte scales.
struct Frame {
  static constexpr double kLeft = 100, kRight = 40, kTop = 64, kPlotH = 480, kBottom = 48;
  double width = 1200, plot_w = 0;
  int steps = 1;
  double ymax = 1;
  double x(double step) const { return kLeft + step * plot_w / steps; }
  double y(double bytes) const { return kTop + kPlotH - bytes * kPlotH / ymax; }
  double height() const { return kTop + kPlotH + kBottom; }
};

void svg_axes(const Frame& f, std::string* out) {
  *out += str_cat("<rect x='", f.x(0), "' y='", Frame::kTop, "' width='", f.plot_w, "' height='",
                  Frame::kPlotH, "' fill='#fafafa' stroke='#888'/>\n");
  const double xs = std::max(1.0, tick_step(f.steps, 20, 1));
  for (double s = 0; s <= f.steps; s += xs) {
    *out += str_cat("<line x1='", f.x(s), "' y1='", f.y(0), "' x2='", f.x(s), "' y2='", f.y(0) + 5,
                    "' stroke='#888'/><text x='", f.x(s), "' y='", f.y(0) + 18,
                    "' text-anchor='middle'>", s, "</text>\n");
  }
  *out += str_cat("<text x='", f.x(f.steps / 2.0), "' y='", f.y(0) + 38,
                  "' text-anchor='middle'>step</text>\n");
  const std::pair<double, const char*> unit = byte_unit(f.ymax);
  const double ys = tick_step(f.ymax / unit.first, 8, 1);
  for (int k = 0; k * ys * unit.first <= f.ymax; ++k) {
    const double b = k * ys * unit.first;
    *out += str_cat("<line x1='", f.x(0) - 5, "' y1='", f.y(b), "' x2='", f.x(0), "' y2='", f.y(b),
                    "' stroke='#888'/><text x='", f.x(0) - 8, "' y='", f.y(b) + 4,
                    "' text-anchor='end'>", k * ys, " ", unit.second, "</text>\n");
  }
  *out +=
      str_cat("<text x='16' y='", Frame::kTop + Frame::kPlotH / 2, "' transform='rotate(-90 16 ",
              Frame::kTop + Frame::kPlotH / 2, ")' text-anchor='middle'>pool offset</text>\n");
}

// One rectangle per buffer, colored per in-place group (a group shares one hue).
void svg_buffers(const Plan& plan, const TempMemory& m, const Frame& f, std::string* out) {
  const Partners p = partners(m);
  std::vector<int> group(m.temps.size());
  for (size_t t = 0; t < group.size(); ++t) group[t] = static_cast<int>(t);
  std::map<int32_t, int> temp_of;
  for (size_t t = 0; t < m.temps.size(); ++t) temp_of[m.temps[t]] = static_cast<int>(t);
  for (const InPlacePair& q : m.in_place) group[temp_of[q.output]] = group[temp_of[q.input]];
  for (size_t t = 0; t < m.temps.size(); ++t) {
    const LiveBuffer& r = m.ranges[t];
    if (r.bytes == 0) continue;
    const int64_t offset = plan.buffers[m.temps[t]].offset;
    const double top = f.y(static_cast<double>(offset + r.bytes));
    const double h = std::max(0.5, f.y(static_cast<double>(offset)) - top);
    const int hue = static_cast<int>((group[t] * 137.508)) % 360;
    std::string tip = str_cat(buffer_text(plan, m.temps[t]), ": ", r.bytes, " bytes, steps [",
                              r.first, ", ", r.last, "], offset ", offset);
    const std::string partner = partner_text(plan, m, p, t);
    if (!partner.empty()) tip += "; " + partner;
    *out += str_cat("<rect x='", f.x(r.first), "' y='", top, "' width='",
                    f.x(r.last + 1) - f.x(r.first), "' height='", h, "' fill='hsl(", hue,
                    ",60%,70%)' stroke='#333' stroke-width='0.5'><title>", xml_escape(tip),
                    "</title></rect>\n");
  }
}

void svg_lines(const TempMemory& m, int64_t pool, const Frame& f, std::string* out) {
  std::string path = str_cat("M", f.x(0), ",", f.y(0));
  for (int s = 0; s < static_cast<int>(m.live_bytes.size()); ++s) {
    const double y = f.y(static_cast<double>(m.live_bytes[s]));
    path += str_cat(" V", y, " H", f.x(s + 1));
  }
  *out += str_cat("<path d='", path, " V", f.y(0),
                  "' fill='none' stroke='#000' stroke-width='1.2'><title>bytes live at each "
                  "step (aligned; an in-place group once)</title></path>\n");
  const int64_t lb = m.pool.lower_bound;
  *out += str_cat("<line x1='", f.x(0), "' y1='", f.y(lb), "' x2='", f.x(f.steps), "' y2='",
                  f.y(lb), "' stroke='#1f5fbf' stroke-width='2' stroke-dasharray='8 4'/>",
                  "<text x='", f.x(f.steps) - 4, "' y='", f.y(lb) + 14,
                  "' text-anchor='end' fill='#1f5fbf'>lower bound ", lb, " B</text>\n");
  *out += str_cat("<line x1='", f.x(0), "' y1='", f.y(pool), "' x2='", f.x(f.steps), "' y2='",
                  f.y(pool), "' stroke='#c0262d' stroke-width='2'/><text x='", f.x(0) + 4, "' y='",
                  f.y(pool) - 5, "' fill='#c0262d'>pool ", pool, " B</text>\n");
  if (m.peak_step >= 0) {
    const double x = f.x(m.peak_step + 0.5);
    *out += str_cat("<line x1='", x, "' y1='", Frame::kTop, "' x2='", x, "' y2='", f.y(0),
                    "' stroke='#1f5fbf' stroke-dasharray='2 3'/><text x='", x + 4, "' y='",
                    Frame::kTop + 12, "' fill='#1f5fbf'>peak: step ", m.peak_step, "</text>\n");
  }
}

}  // namespace

std::string step_label(const Plan& plan, int s) {
  const Step& st = plan.steps.at(s);
  if (st.kind == StepKind::Kernel) return "kernel " + plan.kernels.at(st.index).name;
  const ExternCall& x = plan.externs.at(st.index);
  return str_cat("extern ", extern_op_name(x.op), x.origin.empty() ? "" : " (" + x.origin + ")");
}

std::string memory_to_text(const Plan& plan, const TempMemory& m) {
  const Partners p = partners(m);
  int64_t unshared = 0;
  for (const LiveBuffer& r : m.ranges) unshared += pool_aligned(r.bytes);
  std::string out =
      str_cat("memory: pool ", plan.pool_bytes, " bytes, lower bound ", m.pool.lower_bound,
              " bytes (ratio ", ratio_text(plan.pool_bytes, m.pool.lower_bound), "), ",
              m.peak_step >= 0 ? str_cat("peak at step ", m.peak_step) : "nothing live", "\n");
  out += str_cat("temps: ", m.temps.size(), " (", unshared,
                 " bytes, aligned, if none shared), in-place pairs: ", m.in_place.size(), "\n\n");
  char head[256];
  std::snprintf(head, sizeof head, "%-36s %12s  %-12s %10s  %s\n", "buffer", "bytes", "steps",
                "offset", "in place");
  out += head;
  for (size_t t = 0; t < m.temps.size(); ++t) {
    const LiveBuffer& r = m.ranges[t];
    char line[256];
    std::snprintf(line, sizeof line, "%-36s %12lld  %-12s %10lld  ",
                  buffer_text(plan, m.temps[t]).c_str(), static_cast<long long>(r.bytes),
                  str_cat("[", r.first, ", ", r.last, "]").c_str(),
                  static_cast<long long>(plan.buffers[m.temps[t]].offset));
    out += line + partner_text(plan, m, p, t) + "\n";
  }
  out += "\nlive bytes per step (aligned; an in-place group counts once):\n";
  for (size_t s = 0; s < m.live_bytes.size(); ++s) {
    out += str_cat("  step ", s, ": ", m.live_bytes[s],
                   static_cast<int>(s) == m.peak_step ? " peak" : "",
                   s < plan.steps.size() ? "  " + step_label(plan, static_cast<int>(s)) : "", "\n");
  }
  return out;
}

std::string memory_to_svg(const Plan& plan, const TempMemory& m) {
  Frame f;
  f.plot_w = f.width - Frame::kLeft - Frame::kRight;
  f.steps = std::max<int>(1, static_cast<int>(m.live_bytes.size()));
  int64_t top = std::max<int64_t>({plan.pool_bytes, m.pool.lower_bound, 64});
  f.ymax = static_cast<double>(top) * 1.06;  // room above the pool line for its label
  std::string out = str_cat(
      "<svg xmlns='http://www.w3.org/2000/svg' width='", f.width, "' height='", f.height(),
      "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' "
      "fill='white'/>\n<text x='",
      Frame::kLeft, "' y='22' font-size='15'>memory plan: pool ", plan.pool_bytes,
      " bytes, lower bound ", m.pool.lower_bound, " bytes (ratio ",
      ratio_text(plan.pool_bytes, m.pool.lower_bound), "), ", m.temps.size(), " temps, ",
      m.in_place.size(), " in-place pairs</text>\n<text x='", Frame::kLeft,
      "' y='42' fill='#555'>one rectangle per temp buffer (x: its live steps, y: its bytes in the "
      "pool; hover for name, size, range); black: bytes live per step</text>\n");
  svg_axes(f, &out);
  svg_buffers(plan, m, f, &out);
  svg_lines(m, plan.pool_bytes, f, &out);
  return out + "</svg>\n";
}

}  // namespace ferrite
