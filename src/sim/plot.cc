// torusmpi_sim --plot (plot.h): writes a gnuplot script that draws the call in the plane, one
// unit between neighbouring chips, and runs gnuplot on it.
#include "sim/plot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/log.h"

namespace torusmpi::sim_tool {
namespace {

using log::format;

constexpr char kGnuplot[] = "gnuplot";
constexpr char kNoGnuplot[] =
    "--plot needs gnuplot (Debian package gnuplot-nox), which is not on PATH";

// The picture's measures, in units of the distance between neighbouring chips.
constexpr double kRadius = 0.3;      // a chip
constexpr double kRim = 0.07;        // the ring of a chip's network bytes, outside it
constexpr double kGap = 0.03;        // between a chip and the arrows at it
constexpr double kLane = 0.075;      // an arrow's offset from the line between two chips
constexpr double kMargin = 0.8;      // round a panel's grid: the wrap-around stubs
constexpr double kPanelGap = 0.35;   // between panels
constexpr double kPanelTitle = 0.4;  // above a panel's grid, for its name
constexpr double kZStub = 0.2;       // length of a link to another z plane
constexpr double kStubHead = 0.09;   // the solid end of a dashed wrap-around arrow
constexpr double kDiagonal = 0.70710678118654752;

// A gnuplot string: double quotes, in which \\, \" and \n are escapes.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else {
      if (c == '\\' || c == '"') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

// The binary unit (B, KiB, MiB, GiB, TiB) that writes `bytes` with 1 to 1023 of it.
struct Unit {
  const char* name;
  double size;
};
Unit unit_of(uint64_t bytes) {
  static const Unit kUnits[] = {{"B", 1.0},
                                {"KiB", 1024.0},
                                {"MiB", 1024.0 * 1024},
                                {"GiB", 1024.0 * 1024 * 1024},
                                {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  size_t i = 0;
  while (i + 1 < sizeof kUnits / sizeof kUnits[0] && bytes >= kUnits[i + 1].size) ++i;
  return kUnits[i];
}
std::string bytes_text(uint64_t bytes) {
  const Unit u = unit_of(bytes);
  return format("%.3g %s", static_cast<double>(bytes) / u.size, u.name);
}

struct Point {
  double x = 0, y = 0;
};

// What the script draws, as gnuplot data blocks: one line per item.
struct Blocks {
  std::string busy, busy_wrap, idle, idle_wrap;  // arrows: x y dx dy value
  std::string nodes;                             // x y ring-value has-ranks
  std::string labels;                            // x y "text"
  std::string panels;                            // x y "text"
};

class Drawing {
 public:
  explicit Drawing(const PlotCall& call) : call_(call), m_(*call.machine) {
    const int planes = m_.dims[2];
    instances_ = m_.instances;
    panels_ = instances_ * planes;
    // A 3D torus: a row of planes per instance, or one instance's planes in a square; a 2D one:
    // instances in rows of four.
    if (m_.ndims == 3) {
      cols_ = instances_ > 1 ? planes : static_cast<int>(std::ceil(std::sqrt(planes)));
    } else {
      cols_ = std::min(instances_, 4);
    }
    rows_ = (panels_ + cols_ - 1) / cols_;
    nics_ = instances_ > 1;
    named_panels_ = panels_ > 1;
    panel_w_ = (m_.dims[0] - 1) + 2 * kMargin;
    panel_h_ = (m_.dims[1] - 1) + 2 * kMargin + (named_panels_ ? kPanelTitle : 0);
    const uint64_t most = std::max(most_of(call.result->link_bytes), most_of(nic_bytes()));
    unit_ = unit_of(most);
    top_ = most > 0 ? static_cast<double>(most) / unit_.size : 1;
  }

  std::string script(const std::string& file) {
    Blocks b;
    ranks_of_chips();
    for (int p = 0; p < panels_; ++p) panel(p, &b);
    for (int inst = 0; inst < instances_; ++inst) {
      for (int id = 0; id < topo::link_count(m_); ++id) link(inst, id, &b);
    }
    const double width = cols_ * panel_w_ + (cols_ - 1) * kPanelGap;
    const double height = rows_ * panel_h_ + (rows_ - 1) * kPanelGap;
    // Pixels: a chip's text needs about 130 per unit; the title, the note and the colour bar
    // theirs.
    const double scale = std::clamp(3000.0 / width, 120.0, 160.0);
    const int plot_w = static_cast<int>(width * scale), plot_h = static_cast<int>(height * scale);
    const int left = 20, right = 190, top = 95, bottom = 75;
    const int px_w = std::max(plot_w + left + right, 1100), px_h = plot_h + top + bottom;

    std::string s;
    s += format("set terminal pngcairo size %d,%d font 'Sans,11' noenhanced\n", px_w, px_h);
    s += "set output " + quoted(file) + "\n";
    s += "unset border\nunset xtics\nunset ytics\nunset key\n";
    // The plot area in screen fractions, so that a unit is as wide as it is high.
    s += format("set lmargin at screen %.5f\n", static_cast<double>(left) / px_w);
    s += format("set rmargin at screen %.5f\n", static_cast<double>(left + plot_w) / px_w);
    s += format("set tmargin at screen %.5f\n", 1.0 - static_cast<double>(top) / px_h);
    s += format("set bmargin at screen %.5f\n", static_cast<double>(bottom) / px_h);
    s += format("set xrange [0:%.4f]\nset yrange [%.4f:0]\n", width, -height);
    // The title, centred on the picture (a plot's title is centred on its plot area).
    s += "set label 2 " + quoted(title()) +
         format(" at screen 0.5, screen %.5f center font 'Sans,13'\n", 1.0 - 32.0 / px_h);
    s += format("set cbrange [0:%.6g]\n", top_);
    s += "set palette defined (0 '#2c7bb6', 0.35 '#00a6ca', 0.55 '#7fc97f', 0.75 '#f29e2e', "
         "1 '#d7191c')\n";
    s += "set cblabel " +
         quoted(format("%s a link carried%s", unit_.name,
                       nics_ ? " (rings: a chip received from other instances)" : "")) +
         "\n";
    s += format(
        "set colorbox vertical user origin screen %.5f, screen %.5f size screen %.5f, "
        "screen %.5f\n",
        static_cast<double>(left + plot_w + 40) / px_w, static_cast<double>(bottom) / px_h,
        18.0 / px_w, static_cast<double>(plot_h) / px_h);
    s += "set label 1 " + quoted(note()) +
         format(" at screen %.5f, screen %.5f left font 'Sans,10'\n",
                static_cast<double>(left) / px_w, 28.0 / px_h);
    s += "$busy << EOD\n" + b.busy + "EOD\n";
    s += "$busywrap << EOD\n" + b.busy_wrap + "EOD\n";
    s += "$idle << EOD\n" + b.idle + "EOD\n";
    s += "$idlewrap << EOD\n" + b.idle_wrap + "EOD\n";
    s += "$nodes << EOD\n" + b.nodes + "EOD\n";
    s += "$labels << EOD\n" + b.labels + "EOD\n";
    s += "$panels << EOD\n" + b.panels + "EOD\n";

    // Layers from the bottom: rings, chips, idle links, busy links, texts.
    std::vector<std::string> layers;
    const double head = 0.075;
    if (nics_) {
      layers.push_back(
          format("$nodes using 1:2:(%.3f):3 with circles fs solid 1.0 noborder lc "
                 "palette",
                 kRadius + kRim));
    }
    layers.push_back(
        format("$nodes using 1:2:(%.3f):($4 > 0 ? 0xffffff : 0xe8e8e8) with circles fs solid 1.0 "
               "border lc rgb '#404040' lw 1.5 fc rgb variable",
               kRadius));
    if (!b.idle.empty()) {
      layers.push_back(
          format("$idle using 1:2:3:4 with vectors head filled size %.3f,22 lw 1.2 "
                 "lc rgb '#b8b8b8'",
                 head));
    }
    if (!b.idle_wrap.empty()) {
      layers.push_back(
          "$idlewrap using 1:2:3:4 with vectors nohead lw 1.2 dt (6,4) lc rgb '#b8b8b8'");
    }
    if (!b.busy.empty()) {
      layers.push_back(
          format("$busy using 1:2:3:4:5 with vectors head filled size %.3f,22 lw 3.5 "
                 "lc palette",
                 head));
    }
    if (!b.busy_wrap.empty()) {
      layers.push_back("$busywrap using 1:2:3:4:5 with vectors nohead lw 3.5 dt (4,3) lc palette");
    }
    layers.push_back(format("$labels using 1:2:3 with labels font 'Sans,%d' tc rgb '#202020'",
                            scale < 140 ? 9 : 10));
    if (!b.panels.empty()) layers.push_back("$panels using 1:2:3 with labels font 'Sans,12'");
    // A plot draws the colour bar only when a layer uses the palette.
    if (b.busy.empty() && b.busy_wrap.empty() && !nics_) {
      layers.push_back("$nodes using 1:2:(0) with points pt 7 ps 0 lc palette");
    }
    s += "plot ";
    for (size_t i = 0; i < layers.size(); ++i) s += (i ? ", \\\n     " : "") + layers[i];
    s += "\n";
    return s;
  }

 private:
  const std::vector<uint64_t>& nic_bytes() const { return call_.result->nic_bytes; }
  static uint64_t most_of(const std::vector<uint64_t>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  }
  double value(uint64_t bytes) const { return static_cast<double>(bytes) / unit_.size; }

  // Where chip `chip` of instance `inst` is drawn.
  Point centre(int inst, int chip) const {
    int c[3];
    topo::chip_coords(m_, chip, c);
    const int p = inst * m_.dims[2] + c[2];
    const double x0 = (p % cols_) * (panel_w_ + kPanelGap);
    const double y0 = -(p / cols_) * (panel_h_ + kPanelGap) - (named_panels_ ? kPanelTitle : 0);
    return {x0 + kMargin + c[0], y0 - kMargin - c[1]};
  }

  // The first and last rank of each chip of the job (placed core, then chip, then instance).
  void ranks_of_chips() {
    const int chips = m_.chips();
    first_.assign(static_cast<size_t>(chips) * instances_, -1);
    last_ = first_;
    for (int r = 0; r < call_.ranks; ++r) {
      const topo::Place pl = topo::place(m_, r);
      const size_t k = static_cast<size_t>(pl.instance) * chips + pl.chip;
      if (k >= first_.size()) continue;
      if (first_[k] < 0) first_[k] = r;
      last_[k] = r;
    }
  }

  void panel(int p, Blocks* b) {
    const int planes = m_.dims[2];
    const int inst = p / planes, z = p % planes;
    if (named_panels_) {
      std::string name;
      if (instances_ > 1) name = format("instance %d", inst);
      if (m_.ndims == 3) name += format("%sz = %d", name.empty() ? "" : ", ", z);
      const double x0 = (p % cols_) * (panel_w_ + kPanelGap);
      const double y0 = -(p / cols_) * (panel_h_ + kPanelGap);
      b->panels += format("%.4f %.4f %s\n", x0 + panel_w_ / 2, y0 - kPanelTitle / 2,
                          quoted_data(name).c_str());
    }
    const std::vector<uint64_t>& nic = nic_bytes();
    for (int y = 0; y < m_.dims[1]; ++y) {
      for (int x = 0; x < m_.dims[0]; ++x) {
        const int c3[3] = {x, y, z};
        const int chip = topo::chip_at(m_, c3);
        const size_t k = static_cast<size_t>(inst) * m_.chips() + chip;
        const Point at = centre(inst, chip);
        const uint64_t in = k < nic.size() ? nic[k] : 0;
        const bool has_ranks = first_[k] >= 0;
        b->nodes += format("%.4f %.4f %.6g %d\n", at.x, at.y, value(in), has_ranks ? 1 : 0);
        // Two lines, three with the network's bytes, centred on the chip.
        std::vector<std::string> lines = {format("chip %d", chip)};
        if (!has_ranks) {
          lines.push_back("no rank");
        } else if (first_[k] == last_[k]) {
          lines.push_back(format("r %d", first_[k]));
        } else {
          lines.push_back(format("r %d-%d", first_[k], last_[k]));
        }
        if (nics_) lines.push_back(in > 0 ? "in " + bytes_text(in) : "in 0");
        const double step = 0.13;
        double ly = at.y + step * (lines.size() - 1) / 2;
        for (const std::string& l : lines) {
          b->labels += format("%.4f %.4f %s\n", at.x, ly, quoted_data(l).c_str());
          ly -= step;
        }
      }
    }
  }

  // A string in a data block: double quotes, which the text never holds.
  static std::string quoted_data(const std::string& s) { return "\"" + s + "\""; }

  // One directed link of one instance.
  void link(int inst, int id, Blocks* b) {
    const topo::Link l = topo::link_of(m_, id);
    const size_t k = static_cast<size_t>(inst) * topo::link_count(m_) + id;
    const std::vector<uint64_t>& bytes = call_.result->link_bytes;
    const uint64_t n = k < bytes.size() ? bytes[k] : 0;
    std::string& line = n > 0 ? b->busy : b->idle;
    std::string& wrap = n > 0 ? b->busy_wrap : b->idle_wrap;
    const Point a = centre(inst, l.from);
    const double off = kRadius + (nics_ ? kRim : 0) + kGap;
    auto arrow = [&](std::string* to, Point from, Point end) {
      *to += format("%.4f %.4f %.4f %.4f %.6g\n", from.x, from.y, end.x - from.x, end.y - from.y,
                    value(n));
    };
    if (l.dim == 2) {
      // To the next plane up-right, to the previous down-left, from the chip's rim.
      const double s = l.dir > 0 ? kDiagonal : -kDiagonal;
      arrow(&line, {a.x + s * off, a.y + s * off},
            {a.x + s * (off + kZStub), a.y + s * (off + kZStub)});
      return;
    }
    // The way in the picture (y is drawn downwards) and its right-hand side.
    Point u{l.dim == 0 ? 1.0 * l.dir : 0.0, l.dim == 1 ? -1.0 * l.dir : 0.0};
    int cf[3], ct[3];
    topo::chip_coords(m_, l.from, cf);
    topo::chip_coords(m_, l.to, ct);
    const int size = m_.dims[l.dim];
    // A dimension of two has one link each way between its chips, both named dir +1: draw the
    // way they go.
    if (size == 2 && ct[l.dim] < cf[l.dim]) u = {-u.x, -u.y};
    const Point side{u.y * kLane, -u.x * kLane};
    const bool wraps = size > 2 && (cf[l.dim] + l.dir < 0 || cf[l.dim] + l.dir >= size);
    const Point c = centre(inst, l.to);
    if (!wraps) {
      arrow(&line, {a.x + u.x * off + side.x, a.y + u.y * off + side.y},
            {c.x - u.x * off + side.x, c.y - u.y * off + side.y});
      return;
    }
    // Out of the grid's edge past `from`, back in from the opposite edge to `to`: dashed, with
    // a solid head (a dashed one is a blot).
    const double edge = kMargin - 0.08;
    auto stub = [&](Point at, double from, double to) {
      const double neck = to - kStubHead;
      arrow(&wrap, {at.x + u.x * from + side.x, at.y + u.y * from + side.y},
            {at.x + u.x * neck + side.x, at.y + u.y * neck + side.y});
      arrow(&line, {at.x + u.x * neck + side.x, at.y + u.y * neck + side.y},
            {at.x + u.x * to + side.x, at.y + u.y * to + side.y});
    };
    stub(a, off, edge);
    stub(c, -edge, -off);
  }

  std::string title() const {
    const coll::sim::Result& r = *call_.result;
    std::string machine = m_.name;
    if (instances_ > 1) machine = format("%d x %s", instances_, m_.name.c_str());
    std::string torus = format("%dx%d", m_.dims[0], m_.dims[1]);
    if (m_.ndims == 3) torus += format("x%d", m_.dims[2]);
    const double t = r.time;
    const std::string time = t >= 1e-3 ? format("%.4g ms", t * 1e3) : format("%.4g us", t * 1e6);
    std::string busiest = "no link used";
    if (r.busiest_link >= 0) {
      const int links = topo::link_count(m_);
      const topo::Link l = topo::link_of(m_, r.busiest_link % links);
      busiest =
          format("busiest link %d-%d%s: %s", l.from, l.to,
                 instances_ > 1 ? format(" of instance %d", r.busiest_link / links).c_str() : "",
                 bytes_text(r.busiest_bytes).c_str());
    }
    return format("%s %s, %s (%zu bytes), %d ranks on %s (%s torus, %d rank%s a chip)\n",
                  call_.collective, call_.algorithm, bytes_text(call_.bytes).c_str(), call_.bytes,
                  call_.ranks, machine.c_str(), torus.c_str(), m_.cores, m_.cores == 1 ? "" : "s") +
           format("predicted %s; %s%s", time.c_str(), busiest.c_str(),
                  r.ok ? "" : "; the result is WRONG");
  }

  std::string note() const {
    std::string s =
        "Each arrow is one direction of a link, coloured by the bytes it carried (grey: none); "
        "dashed: a wrap-around link, leaving one edge and entering at the opposite one.";
    if (m_.ndims == 3)
      s += "\nDiagonal stubs: a chip's links to the next z plane (up-right) and "
           "to the previous one (down-left).";
    if (nics_)
      s += "\nRing round a chip: the bytes its network interface received from other "
           "instances.";
    return s;
  }

  const PlotCall& call_;
  const topo::Machine& m_;
  int instances_ = 1, panels_ = 1, cols_ = 1, rows_ = 1;
  bool nics_ = false, named_panels_ = false;
  double panel_w_ = 0, panel_h_ = 0;
  Unit unit_{"B", 1};
  double top_ = 1;
  std::vector<int> first_, last_;
};

// A file of its own in the temporary directory, open for writing; "" when it cannot be made.
std::string temp_file(const char* tag, int* fd) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/torusmpi_sim-" +
                     tag + "-XXXXXX";
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  *fd = mkstemp(buf.data());
  return *fd < 0 ? std::string() : std::string(buf.data());
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}

// Runs gnuplot on `script_path`, its messages into `err_fd`. Its exit status; 127 when it could
// not be started.
int run_gnuplot(const std::string& script_path, int err_fd) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
    }
    dup2(err_fd, STDERR_FILENO);
    execlp(kGnuplot, kGnuplot, script_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string plot_unavailable() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string file = dir + "/" + kGnuplot;
    struct stat st;
    if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), X_OK) == 0) {
      return "";
    }
    start = end + 1;
  }
  return kNoGnuplot;
}

bool plot(const PlotCall& call, const std::string& file, std::string* error) {
  if (call.machine == nullptr || !call.machine->emulated() || call.result == nullptr) {
    *error = "--plot draws a call on an emulated instance";
    return false;
  }
  const std::string script = Drawing(call).script(file);
  int script_fd = -1, err_fd = -1;
  const std::string script_path = temp_file("plot", &script_fd);
  const std::string err_path = script_path.empty() ? "" : temp_file("gnuplot", &err_fd);
  bool ok = false;
  if (script_path.empty() || err_path.empty()) {
    *error = std::string("cannot make a temporary file: ") + std::strerror(errno);
  } else if (!write_all(script_fd, script)) {
    *error = std::string("cannot write the gnuplot script: ") + std::strerror(errno);
  } else {
    const int status = run_gnuplot(script_path, err_fd);
    std::string said = read_all(err_fd);
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    if (status == 127 && said.empty()) {
      *error = kNoGnuplot;
    } else if (status != 0) {
      *error = format("gnuplot failed (exit status %d)%s%s", status, said.empty() ? "" : ": ",
                      said.c_str());
    } else if (access(file.c_str(), R_OK) != 0) {
      *error = "gnuplot wrote no " + file;
    } else {
      // A warning does not spoil the picture, but is told.
      if (!said.empty()) std::fprintf(stderr, "torusmpi_sim: --plot: gnuplot: %s\n", said.c_str());
      ok = true;
    }
    // What gnuplot began of the picture is not one.
    if (!ok && status != 127) unlink(file.c_str());
  }
  if (script_fd >= 0) {
    close(script_fd);
    unlink(script_path.c_str());
  }
  if (err_fd >= 0) {
    close(err_fd);
    unlink(err_path.c_str());
  }
  return ok;
}

}  // namespace torusmpi::sim_tool
