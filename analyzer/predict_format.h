// Output formats of `rooftrace predict` behind one interface, like
// `analyze`'s: a table for people, CSV (one row per op and phase, raw
// units), the JSON document that `analyze --expect` reads back, and a
// self-contained HTML page whose roofline plot is analyze's
// (report/roofline_svg.h) with one point per predicted op and phase.
//
// Writers are stateless; thread-safe.
#ifndef ROOFTRACE_ANALYZER_PREDICT_FORMAT_H_
#define ROOFTRACE_ANALYZER_PREDICT_FORMAT_H_

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "analyzer/predict.h"

namespace rooftrace::analyzer {

class PredictionWriter {
 public:
  virtual ~PredictionWriter() = default;
  virtual void Write(const Prediction& p, std::ostream& out) const = 0;
};

// "table", "csv", "json", "html"; nullptr for anything else.
std::unique_ptr<PredictionWriter> MakePredictionWriter(std::string_view format);

// The roofline plot alone (a standalone SVG document body).
StatusOr<std::string> RenderPredictionSvg(const Prediction& p);

}  // namespace rooftrace::analyzer

#endif  // ROOFTRACE_ANALYZER_PREDICT_FORMAT_H_
