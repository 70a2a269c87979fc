// What AWS publishes for Neuron collectives against the simulator (see published.h).
//
// Every collective figure of the nccom-test user guide (tools/neuron-sys-tools/nccom-test.rst in
// aws-neuron/aws-neuron-sdk, awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/
// neuron-sys-tools/nccom-test.html, as of Neuron 2.32), example by example. The Neuron
// performance pages (about-neuron/benchmarks/) give model throughput only, no collective figure;
// the collectives pages give per-hop latencies (1-2 us on NeuronLink, ~15 us between instances),
// which src/topo's kModels holds.
//
// What the figures are:
//  - time(us) is the mean over the measured operations; size(B) is the whole vector of an
//    all-reduce and every rank's blocks together for an all-gather (--show-input-output-size
//    prints an input of size / r); busbw is algbw times nccl-tests' factor, 2(r-1)/r for
//    all-reduce and (r-1)/r for all-gather.
//  - Units: the guide says GiB/s, and the four examples it has had since Neuron 2.10 (2023) are
//    computed so (1 GiB / 18930 us = 52.83 GiB/s); the examples added from Neuron 2.24 (2025) on
//    are computed in GB/s of 1e9 bytes (524288 B / 23.16 us = 22.64). Only the time is compared.
//  - The instance: the 2023 examples come from when nccom-test ran on trn1 and inf2 only, and
//    span 2 instances of 32 ranks (-r 64 -N 2): trn1.32xlarge, whose 32 NeuronCores are its 32
//    ranks (LNC=1 on trn1). Ranks fill a chip's cores first, so `-r 2` is the two cores of chip
//    0: one chip, no NeuronLink. The later examples name no instance. They are shown on trn2.48xl
//    (LNC=2, 4 ranks a chip): the multistream one runs 64 ranks on one instance, which only trn2
//    holds, and KangaRing, which --show-algorithm names, pairs the ranks of an LNC=2 chip. They
//    are not held to the bound: their floors disagree with each other beyond any per-call cost
//    (an all-reduce of 16 ranks at 300 us, an all-gather of 32 at 6 us, of 8 at 10 us).
//  - Points the simulator cannot run are listed, unsimulated: permute (no MPI collective), an
//    alltoallv of uneven counts, and the multistream example's operations, which run at once on
//    two streams.
#include "coll/sim/published.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "coll/collective.h"
#include "coll/select/registry.h"
#include "coll/select/select.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"
#include "core/log.h"
#include "topo/machine.h"

namespace torusmpi::coll::sim {
namespace {

using log::format;

constexpr char kGiB[] = "GiB/s";
constexpr char kGB[] = "GB/s";

constexpr char kGuide[] =
    "AWS Neuron docs, nccom-test user guide (tools/neuron-sys-tools/nccom-test.html)";
constexpr char kQuick[] = "quick environment validation: nccom-test -r 2 allr (since Neuron 2.10)";
constexpr char kTwoRanks[] =
    "nccom-test -r 2 --minbytes 1kb --maxbytes 1gb --stepfactor 4 --datatype fp32 allr (since "
    "Neuron 2.10)";
constexpr char kAllgather32[] =
    "nccom-test -r 32 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --check allg "
    "(since Neuron 2.10)";
constexpr char kTwoInstances[] =
    "nccom-test -r 64 -N 2 -b 8 -e 1GB -f 2 -n 50 -w 5 -d fp32 allr (since Neuron 2.10)";
constexpr char kInOutSize[] = "the same -r 32 allg with --show-input-output-size (Neuron 2.24)";
constexpr char kJson[] = "the same -r 32 allg with --report-to-json-file (Neuron 2.24)";
constexpr char kStats[] =
    "nccom-test -r 8 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --stats avg ... "
    "allg (time:avg; Neuron 2.28)";
constexpr char kShowAlgorithm[] =
    "nccom-test -r 16 allr -b 4 -e 1gb -f 16 -d fp32 --show-algorithm (mesh, rdh, kangaring; "
    "Neuron 2.28)";
constexpr char kAllgatherv[] =
    "nccom-test allgv -r 4 -N 1 -b 2048 -e 2048 -d fp16, equal counts (an all-gather; Neuron 2.28)";
constexpr char kPermute[] = "nccom-test -r 8 --custom-src-target-pairs pairs.json permute";
constexpr char kAlltoallv[] =
    "nccom-test -r 2 -N 2 -d fp32 alltoallv -b 1MB -e 1MB --variable-size-op-metadata";
constexpr char kStreamsAllr[] =
    "nccom-test allg -r 64 -c --streams-json: stream 0, all_reduce bf16 in 4 groups of 16";
constexpr char kStreamsAllg[] =
    "nccom-test allg -r 64 -c --streams-json: stream 1, 2 all-gathers of 1 KiB per iteration";

constexpr char kNewer[] =
    "a later example that names no instance (shown on trn2.48xl); the floors of these examples "
    "disagree with each other";
constexpr char kNoCollective[] = "permute is no MPI collective";
constexpr char kUneven[] = "uneven counts, one rank per instance";
constexpr char kConcurrent[] = "runs at once with another stream's operations";
constexpr char kRuntimeStep[] =
    "the 2023 runtime's own step, from 520 us at 8 B to 1315 us from 64 KiB to 2 MiB (algbw 0.05 "
    "GB/s at 64 KiB, a hundredth of one chip's EFA): no figure of the machine climbs so, and a "
    "per-call cost that met it would put 8 B beyond the bound";

// clang-format off
constexpr PublishedPoint kPoints[] = {
    {"trn1.32xl", 1, "allr", 2, 33554432, 1, 768, 40.69, kGiB, kQuick, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 1024, 4, 58, 0.02, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 4096, 4, 58, 0.07, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 16384, 4, 58, 0.26, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 65536, 4, 58, 1.05, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 262144, 4, 60, 4.07, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 1048576, 4, 68, 14.36, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 4194304, 4, 107, 36.51, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 16777216, 4, 332, 47.06, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 67108864, 4, 1214, 51.48, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 268435456, 4, 4750, 52.63, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allr", 2, 1073741824, 4, 18930, 52.83, kGiB, kTwoRanks, nullptr, true},
    {"trn1.32xl", 1, "allg", 32, 1024, 4, 151, 0.01, kGiB, kAllgather32, nullptr, true},
    {"trn1.32xl", 1, "allg", 32, 8192, 4, 149, 0.05, kGiB, kAllgather32, nullptr, true},
    {"trn1.32xl", 1, "allg", 32, 65536, 4, 150, 0.39, kGiB, kAllgather32, nullptr, true},
    {"trn1.32xl", 1, "allg", 32, 524288, 4, 179, 2.64, kGiB, kAllgather32, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 8, 4, 520, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 16, 4, 520, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 32, 4, 523, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 64, 4, 525, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 128, 4, 553, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 256, 4, 709, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 512, 4, 782, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 1024, 4, 840, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 2048, 4, 881, 0.00, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 4096, 4, 916, 0.01, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 8192, 4, 1013, 0.01, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 16384, 4, 1031, 0.03, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 32768, 4, 1174, 0.05, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 65536, 4, 1315, 0.09, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 131072, 4, 1315, 0.18, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 262144, 4, 1311, 0.37, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 524288, 4, 1312, 0.73, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 1048576, 4, 1328, 1.45, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 2097152, 4, 1329, 2.89, kGiB, kTwoInstances, kRuntimeStep, true},
    {"trn1.32xl", 2, "allr", 64, 4194304, 4, 1378, 5.58, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 8388608, 4, 1419, 10.84, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 16777216, 4, 2138, 14.39, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 33554432, 4, 2711, 22.69, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 67108864, 4, 3963, 31.05, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 134217728, 4, 6279, 39.19, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 268435456, 4, 11954, 41.17, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 536870912, 4, 21803, 45.15, kGiB, kTwoInstances, nullptr, true},
    {"trn1.32xl", 2, "allr", 64, 1073741824, 4, 41806, 47.09, kGiB, kTwoInstances, nullptr, true},
    {"trn2.48xl", 1, "allg", 32, 1024, 4, 6.16, 0.16, kGB, kInOutSize, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 8192, 4, 6.48, 1.23, kGB, kInOutSize, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 65536, 4, 8.17, 7.77, kGB, kInOutSize, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 524288, 4, 23.16, 21.93, kGB, kInOutSize, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 1024, 4, 6.19, 0.16, kGB, kJson, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 8192, 4, 6.55, 1.21, kGB, kJson, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 65536, 4, 8.18, 7.76, kGB, kJson, kNewer, true},
    {"trn2.48xl", 1, "allg", 32, 524288, 4, 23.11, 21.98, kGB, kJson, kNewer, true},
    {"trn2.48xl", 1, "allg", 8, 1024, 4, 10.0, 0.09, kGB, kStats, kNewer, true},
    {"trn2.48xl", 1, "allg", 8, 8192, 4, 10.22, 0.7, kGB, kStats, kNewer, true},
    {"trn2.48xl", 1, "allg", 8, 65536, 4, 11.31, 5.07, kGB, kStats, kNewer, true},
    {"trn2.48xl", 1, "allg", 8, 524288, 4, 14.83, 30.92, kGB, kStats, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 4, 4, 299.91, 0.0, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 32, 4, 299.69, 0.0, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 512, 4, 299.82, 0.0, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 8192, 4, 299.74, 0.05, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 131072, 4, 574.15, 0.43, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 2097152, 4, 686.32, 5.73, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 33554432, 4, 2754.15, 22.84, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allr", 16, 536870912, 4, 9689.51, 103.89, kGB, kShowAlgorithm, kNewer, true},
    {"trn2.48xl", 1, "allgv", 4, 2048, 2, 16.28, 0.09, kGB, kAllgatherv, kNewer, true},
    {"trn2.48xl", 1, "permute", 8, 33554432, 1, 894.24, 37.52, kGB, kPermute, kNoCollective, false},
    {"trn2.48xl", 2, "alltoallv", 2, 1048608, 4, 955.05, 0.55, kGB, kAlltoallv, kUneven, false},
    {"trn2.48xl", 1, "allr", 16, 1024, 2, 101.14, 0.02, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 2048, 2, 101.93, 0.04, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 4096, 2, 101.45, 0.08, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 8192, 2, 101.84, 0.15, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 16384, 2, 102.21, 0.30, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 32768, 2, 102.36, 0.60, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 65536, 2, 103.28, 1.19, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 131072, 2, 105.03, 2.34, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 262144, 2, 107.37, 4.58, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 524288, 2, 110.07, 8.93, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allr", 16, 1048576, 2, 117.67, 16.71, kGB, kStreamsAllr, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 257.65, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 258.55, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 257.86, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 258.51, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 259.04, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 257.72, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 258.24, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 258.33, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 258.95, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 259.09, 0.0, kGB, kStreamsAllg, kConcurrent, false},
    {"trn2.48xl", 1, "allg", 64, 1024, 4, 260.6, 0.0, kGB, kStreamsAllg, kConcurrent, false},
};
// clang-format on

const char* pick_name(const Algorithm* a) { return a == nullptr ? "-" : a->token; }

PublishedResult compare(const PublishedPoint& p) {
  PublishedResult r;
  r.point = &p;
  if (!p.simulated) return r;
  r.coll = std::string(p.op) == "allr" ? Coll::kAllreduce : Coll::kAllgather;
  topo::Machine m;
  std::string error;
  if (!topo::parse_machine(p.model, &m, &error)) {
    r.ok = false;
    r.error = error;
    return r;
  }
  m.instances = p.instances;
  // torusmpi's size is one rank's block for an all-gather (as OSU's), nccom-test's all of them.
  const size_t bytes = r.coll == Coll::kAllgather ? p.bytes / p.ranks : p.bytes;
  CallShape shape;
  shape.coll = r.coll;
  shape.size = p.ranks;
  shape.count = collective(r.coll).count_for(bytes, p.elem, p.ranks);
  shape.elem = p.elem;
  shape.machine = &m;
  const std::unique_ptr<Call> call = make_call(shape);
  TorusModel torus;
  const Model model = topo_model(m, call->view, false, &torus);
  const Choice choice = select_algorithm(call->args[0], model);
  r.pick = pick_name(choice.alg);
  const Costs costs = machine_costs(m, call->view);
  for (const Algorithm& alg : algorithms()) {
    std::string why;
    if (alg.coll != r.coll || !supports(alg, call->args[0], &why)) continue;
    const Result res = run(
        call->args, [&alg](Builder& b, const Args& a) { alg.build(b, a); }, costs);
    if (!res.ok) {
      r.ok = false;
      r.error = std::string(alg.token) + ": " + res.error;
      continue;
    }
    const double us = res.time * 1e6;
    if (&alg == choice.alg) r.predicted_us = us;
    if (r.best.empty() || us < r.best_us) {
      r.best = alg.token;
      r.best_us = us;
    }
  }
  r.ratio = r.predicted_us / p.time_us;
  if (p.unchecked == nullptr && !(r.ratio <= kPublishedBound && r.ratio >= 1 / kPublishedBound)) {
    r.ok = false;
    if (r.error.empty()) r.error = "outside the bound";
  }
  return r;
}

}  // namespace

const std::vector<PublishedPoint>& published_points() {
  static const std::vector<PublishedPoint> points(std::begin(kPoints), std::end(kPoints));
  return points;
}

std::vector<PublishedResult> compare_published() {
  std::vector<PublishedResult> out;
  for (const PublishedPoint& p : published_points()) out.push_back(compare(p));
  return out;
}

std::string published_report(const std::vector<PublishedResult>& results, int* failed) {
  std::string text = "# The models' hardware figures (src/topo's table, each with its source):\n";
  for (const std::string& name : topo::model_names()) {
    topo::Machine m;
    std::string error;
    if (!topo::parse_machine(name, &m, &error)) continue;
    text += format(
        "#   %-16s link %.3g GB/s %.3g us/hop; core to core %.3g GB/s; EFA %.3g GB/s/chip %.3g "
        "us; HBM copy %.3g GB/s; %d CC-Cores/chip; call %.3g us + %.3g/chip + %.3g/instance\n",
        name.c_str(), m.neuronlink.bandwidth * 1e-9, m.neuronlink.latency * 1e6,
        m.intra_chip.bandwidth * 1e-9, m.efa.bandwidth * 1e-9, m.efa.latency * 1e6,
        m.hbm_bandwidth * 1e-9, m.cc_cores, m.call.fixed * 1e6, m.call.per_chip * 1e6,
        m.call.per_instance * 1e6);
    text += "#     " + m.source + "\n";
  }
  text += format("# Published points (%s, unless named), predicted with the selector's pick.\n",
                 kGuide);
  text += format("# A checked point's predicted/published time is within 1/%.1f..%.1f.\n",
                 kPublishedBound, kPublishedBound);
  text += format("# %-10s %-3s %-9s %5s %11s %4s %11s %10s %-9s %-18s %11s %7s %s\n", "model", "N",
                 "op", "ranks", "bytes", "elem", "pub (us)", "pub busbw", "unit", "pick",
                 "pred (us)", "ratio", "status");
  int bad = 0, checked = 0, shown = 0;
  const char* example = nullptr;
  const char* reason = nullptr;
  for (const PublishedResult& r : results) {
    const PublishedPoint& p = *r.point;
    if (example != p.example) {
      example = p.example;
      reason = nullptr;
      text += std::string("# ") + p.example + "\n";
    }
    const char* status = !r.ok ? "FAIL" : p.unchecked != nullptr ? "shown" : "ok";
    if (p.simulated) {
      text += format("  %-10s %-3d %-9s %5d %11llu %4zu %11.2f %10.2f %-9s %-18s %11.2f %7.3f %s\n",
                     p.model, p.instances, p.op, p.ranks, static_cast<unsigned long long>(p.bytes),
                     p.elem, p.time_us, p.busbw, p.unit, r.pick.c_str(), r.predicted_us, r.ratio,
                     status);
      if (r.best != r.pick) {
        text += format("    fastest simulated: %s %.2f us (ratio %.3f)\n", r.best.c_str(),
                       r.best_us, r.best_us / p.time_us);
      }
    } else {
      text += format("  %-10s %-3d %-9s %5d %11llu %4zu %11.2f %10.2f %-9s %-18s %11s %7s %s\n",
                     p.model, p.instances, p.op, p.ranks, static_cast<unsigned long long>(p.bytes),
                     p.elem, p.time_us, p.busbw, p.unit, "-", "-", "-", "not simulated");
    }
    if (p.unchecked != nullptr && p.unchecked != reason) {
      text += std::string("    not checked: ") + p.unchecked + "\n";
    }
    reason = p.unchecked;
    if (!r.error.empty()) text += "    " + r.error + "\n";
    bad += !r.ok;
    checked += p.unchecked == nullptr;
    shown += p.unchecked != nullptr;
  }
  text += format("# %d checked points, %d outside the bound or wrong; %d shown, not checked\n",
                 checked, bad, shown);
  *failed = bad;
  return text;
}

}  // namespace torusmpi::coll::sim
