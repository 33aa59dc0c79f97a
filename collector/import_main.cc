// `rooftrace import`: traces other profilers wrote (and .rft spools) into a
// run store, one run per file, through the same pipeline as a live
// collection: every registered source (sources/registry.h) is a format it
// reads. Every file is checked before anything is written, and each run is
// one transaction: a file that fails part-way leaves nothing in the store,
// except a trace cut short, whose part before the break is stored as an
// incomplete run (exit 3, as collect --ingest, analyze and export).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/cli.h"
#include "base/input_file.h"
#include "collector/commands.h"
#include "model/datasheet.h"
#include "sources/stream_input.h"
#include "sources/registry.h"
#include "store/db.h"
#include "store/store.h"

namespace po = boost::program_options;

namespace rooftrace {
namespace {

constexpr char kName[] = "rooftrace import";

// The source for each file, chosen by --format or by content.
StatusOr<std::vector<const TraceSource*>> ChooseSources(
    const std::vector<std::string>& files, const std::string& format) {
  std::vector<const TraceSource*> out;
  const TraceSource* forced = nullptr;
  if (format != "auto") {
    RT_ASSIGN_OR_RETURN(forced, FindSource(format));
  }
  for (const std::string& f : files) {
    RT_RETURN_IF_ERROR(CheckInputIsAFile(f));  // a FIFO would block
    if (forced != nullptr) {
      RT_ASSIGN_OR_RETURN(const std::string head, ReadHead(f));
      if (!forced->Detect(f, head)) {
        return InvalidArgument(
            f + ": does not look like " + std::string(forced->description()) +
            " (--format " + format +
            "); drop --format to let rooftrace detect the format");
      }
      out.push_back(forced);
    } else {
      RT_ASSIGN_OR_RETURN(const TraceSource* s, DetectSource(f));
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

int ImportMain(int argc, char** argv) {
  CommandSpec spec;
  spec.name = "import";
  spec.usage = "rooftrace import FILE... -o STORE [options]";
  spec.summary =
      "Reads traces written by other profilers into a run store, one run per "
      "file, and annotates every kernel against the roofs as a rooftrace "
      "collection would: joins launches and kernels, derives FLOPs and "
      "minimum bytes from recorded shapes (labelled analytic) or takes "
      "them from recorded counters, labels forward steps prefill or decode, "
      "and keeps the tool's raw counters. Formats are detected by content "
      "(gzip is read transparently): " +
      SourceFormatList() +
      ". analyze, diff and export also read these files directly.";
  spec.epilog =
      "Every file is checked before anything is written; a file that fails "
      "part-way leaves nothing in the store (exit 2). So does a gzip file "
      "that expands past --max-decompressed-mib. A trace cut short (an .rft "
      "copy stopped part-way) is stored as an incomplete run with the "
      "reason and the other files are still read (exit 3).\n"
      "Examples:\n"
      "  rooftrace import trace.json.gz -o runs.sqlite\n"
      "  rooftrace import report.sqlite --device a100-80gb -o runs.sqlite\n"
      "  rooftrace import timeline.json --counters ncu.csv -o runs.sqlite\n"
      "  rooftrace import replay.json.gz --capture capture.json.gz -o "
      "runs.sqlite";
  std::vector<std::string> files;
  std::string out, format = "auto", device, profile, counters, model,
      store_kernels = "all";
  std::vector<std::string> captures, label_words;
  std::optional<int64_t> rank, pid;
  bool quiet = false;
  int64_t max_decompressed_mib = 0;  // signed: -1 is refused, not wrapped
  spec.options.add_options()(
      "output,o", po::value(&out), "run store to write (created if missing)")(
      "store-kernels", po::value(&store_kernels)->default_value(store_kernels),
      kStoreKernelsHelp)(
      "format", po::value(&format)->default_value(format),
      ("auto (detect by content) or one of the formats rooftrace reads: " +
       SourceFormatList())
          .c_str())(
      "device", po::value(&device),
      "datasheet key of the GPU the trace ran on, overriding the device the "
      "file names (see `rooftrace devices`)")(
      "device-profile", po::value(&profile),
      "calibrated roofs (rooftrace calibrate -o); default: datasheet")(
      "rank", po::value<int64_t>()->notifier([&](int64_t v) { rank = v; }),
      "keep only this rank where a file holds several")(
      "pid", po::value<int64_t>()->notifier([&](int64_t v) { pid = v; }),
      "keep only this process where a file holds several")(
      "counters", po::value(&counters),
      "an Nsight Compute CSV whose per-kernel counters are attached to the "
      "timeline's kernels by name and occurrence")(
      "capture", po::value(&captures)->composing(),
      "a PyTorch profiler trace recorded while the engine captured its "
      "CUDA/HIP graphs (repeatable): each graph launch of the imported "
      "traces whose kernels a capture launched takes the captured "
      "operators' shapes, kernel by kernel")(
      "model", po::value(&model),
      "the model the traces ran: a Hugging Face config.json or a built-in "
      "name (gpt-oss-20b, DeepSeek-V3, Mixtral-8x7B, ...); gives what "
      "operator arguments do not say (an MoE layer's top-k and expert "
      "width); without it such layers stay blank")(
      "label", po::value(&label_words)->composing(),
      "KEY=VALUE stored with each run (repeatable): commit, branch, model, GPU, batch, anything; `rooftrace history --where KEY=VALUE` selects runs by them")(
      "max-decompressed-mib", po::value(&max_decompressed_mib),
      "how far a gzip file may expand, in MiB; past it the file is refused "
      "(exit 2, nothing stored). Default: $ROOFTRACE_MAX_DECOMPRESSED_MIB, "
      "else 64x the compressed size, at least 1 GiB, at most a fifth of "
      "this machine's memory")(
      "quiet,q", po::bool_switch(&quiet), "no progress lines");
  spec.hidden.add_options()("file", po::value(&files)->composing());
  spec.positional.add("file", -1);
  po::variables_map vm;
  if (auto rc = ParseCommandLine(spec, argc, argv, &vm, std::cout, std::cerr)) {
    return *rc;
  }
  const CommandFailure fail{kName};
  const auto labels = ParseKeyValues(label_words, "--label");
  if (!labels.ok()) return fail(labels.status().message());
  const StatusOr<StoreKernels> kept = ParseStoreKernels(store_kernels);
  if (!kept.ok()) return fail(kept.status().message());
  if (files.empty()) return fail("no trace file given; see --help");
  if (out.empty()) {
    return fail("no store given: name one with -o runs.sqlite");
  }
  if (!device.empty() && FindDatasheetEntry(device) == nullptr) {
    return fail("--device " + device +
                ": not a GPU the datasheet knows; `rooftrace devices` lists "
                "the keys");
  }
  if (!device.empty() && !profile.empty()) {
    return fail("give --device or --device-profile, not both");
  }
  GzipBudget gzip_budget;
  if (vm.count("max-decompressed-mib")) {
    if (max_decompressed_mib <= 0 ||
        static_cast<uint64_t>(max_decompressed_mib) > (~0ull >> 20)) {
      return fail("--max-decompressed-mib " +
                  std::to_string(max_decompressed_mib) +
                  ": give a size in MiB above 0, e.g. 16384");
    }
    gzip_budget.max_bytes = static_cast<uint64_t>(max_decompressed_mib) << 20;
    gzip_budget.raise_with = "--max-decompressed-mib N";
  }
  std::optional<ModelFacts> model_facts;
  if (!model.empty()) {
    StatusOr<ModelFacts> facts = LoadModelFacts(model);
    if (!facts.ok()) return fail(facts.status().message());
    model_facts = std::move(*facts);
  }
  // "-", a pipe or a FIFO is read once into a private copy (SQLite
  // refused from them); `files` keeps the names given, for the messages.
  StreamInputs streams;
  std::vector<std::string> paths;
  for (const std::string& f : files) {
    auto path = streams.Resolve(f, gzip_budget);
    if (!path.ok()) return fail(path.status().message());
    paths.push_back(*path);
  }
  for (std::string* extra : {&counters}) {
    if (extra->empty()) continue;
    auto path = streams.Resolve(*extra, gzip_budget);
    if (!path.ok()) return fail(path.status().message());
    *extra = *path;
  }
  for (std::string& capture : captures) {
    auto path = streams.Resolve(capture, gzip_budget);
    if (!path.ok()) return fail(path.status().message());
    capture = *path;
  }
  auto sources = ChooseSources(paths, format);
  if (!sources.ok()) return fail(sources.status().message());

  // The counter file is read once, and before the store is touched.
  std::shared_ptr<const CounterFile> counter_file;
  if (!counters.empty()) {
    auto read = ReadCounterFile(counters, gzip_budget);
    if (!read.ok()) return fail(read.status().message());
    counter_file = *read;
  }

  auto store = Store::Open(out);
  if (!store.ok()) return fail(store.status().message());
  (*store)->set_atomic_runs(true);
  (*store)->set_store_kernels(*kept);
  const std::string shown = StoreDisplayName(out);  // without a password
  SourceOptions options;
  options.device_key = device;
  options.device_profile_path = profile;
  options.rank = rank;
  options.pid = pid;
  options.counters_path = counters;
  options.counters = counter_file;
  options.capture_paths = captures;
  options.model = model_facts;
  options.gzip_budget = gzip_budget;
  options.progress = !quiet;
  options.labels = *labels;
  bool incomplete = false;
  for (size_t i = 0; i < files.size(); ++i) {
    auto result =
        ReadSourceInto(*(*sources)[i], paths[i], options, store->get());
    if (!result.ok()) {
      (void)(*store)->AbortRun();
      // A stream's copy is named as the user named the stream.
      std::cerr << kName << ": " << streams.Shown(result.status().message())
                << "\n";
      if (i > 0) {
        std::cerr << kName << ": the " << i
                  << " file(s) before it are stored in " << shown << "\n";
      }
      return ExitCodeForFailedRun(result.status());
    }
    if (result->cut_short) {
      // The first line says at which byte it broke; the run says it too.
      std::cerr << kName << ": " << streams.Shown(result->warning) << "\n"
                << kName << ": run " << result->run_id
                << " stored INCOMPLETE (" << result->kernels
                << " kernels read before the break) in " << shown << "; "
                << files[i]
                << " was cut short: copy or write it again for all of it\n";
      incomplete = true;
      continue;
    }
    if (!result->warning.empty()) {
      std::cerr << kName << ": warning: " << streams.Shown(result->warning)
                << "\n";
    }
    std::cout << kName << ": " << files[i] << " ("
              << (*sources)[i]->format() << ") -> run " << result->run_id
              << ", " << result->kernels << " kernels, in " << shown << "\n";
  }
  return incomplete ? kExitIncomplete : kExitOk;
}

}  // namespace rooftrace
