// The roofline plot's point labels (report/roofline_svg.h): families that
// share a long prefix get labels that tell them apart, and every point
// keeps its full name in a hover title.
#include "report/roofline_svg.h"
#include "report/comms_svg.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <utility>
#include <string>
#include <vector>

namespace rooftrace {
namespace {

// The texts of the plot's <text> elements inside the label group.
std::vector<std::string> LabelTexts(const std::string& svg) {
  std::vector<std::string> out;
  const size_t group = svg.find("<g font-size=\"11\" fill=\"#111\">");
  if (group == std::string::npos) return out;
  const size_t end = svg.find("</g>", group);
  size_t at = group;
  while ((at = svg.find("<text", at)) != std::string::npos && at < end) {
    const size_t open = svg.find('>', at) + 1;
    const size_t close = svg.find("</text>", open);
    std::string text = svg.substr(open, close - open);
    for (const auto& [from, to] : {std::pair<std::string, std::string>{
                                       "&lt;", "<"},
                                   {"&gt;", ">"},
                                   {"&amp;", "&"}}) {
      for (size_t i; (i = text.find(from)) != std::string::npos;) {
        text.replace(i, from.size(), to);
      }
    }
    out.push_back(text);
    at = close;
  }
  return out;
}

RooflinePlot::Point At(double ai, double flops, const std::string& label) {
  RooflinePlot::Point p;
  p.ai = ai;
  p.flops_per_s = flops;
  p.label = label;
  p.title = label;
  p.label_rank = flops;
  return p;
}

// Issue 37 item 12: a DRAM roof of 1e-300 wrote x="-nan" and y="-inf"
// into the SVG. Any roof or point that has no finite place on the log axes
// refuses the plot, naming its roofs; HTML pages show the refusal in the
// plot's place.
TEST(RooflineSvgTest, NonFiniteCoordinatesAreRefused) {
  RooflinePlot good;
  good.title = "t";
  good.dram_bytes_per_s = 3.35e12;
  good.roofs.push_back({"bf16_tc", 989e12, true});
  good.points.push_back(At(10, 3e13, "k"));
  ASSERT_TRUE(RenderRooflinePlot(good).ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<RooflinePlot> bad(5, good);
  bad[0].dram_bytes_per_s = 1e-300;
  bad[1].roofs[0].peak_flops_per_s = inf;
  bad[2].points[0].ai = nan;
  bad[3].points[0].flops_per_s = inf;
  bad[4].dram_bytes_per_s = nan;
  for (size_t i = 0; i < bad.size(); ++i) {
    StatusOr<std::string> svg = RenderRooflinePlot(bad[i]);
    ASSERT_FALSE(svg.ok()) << i << ": " << *svg;
    EXPECT_EQ(svg.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(svg.status().message().find("the roofline plot \"t\" is not "
                                          "drawn"),
              std::string::npos)
        << svg.status().message();
    EXPECT_NE(svg.status().message().find("bf16_tc"), std::string::npos);
    const std::string page = SvgOrWarning(svg);
    EXPECT_EQ(page.find("x=\""), std::string::npos) << page;
    EXPECT_EQ(page.find("<svg"), std::string::npos) << page;
    EXPECT_NE(page.find("<p class=\"warn\">the roofline plot"),
              std::string::npos);
  }
}

// Four PyTorch elementwise families, which all clip to the same 30
// characters ("at::native::elementwise_ker..."): each label is distinct
// and names what the kernel does; each point has its full name on hover.
TEST(RooflineSvgTest, FamiliesWithOnePrefixGetDistinctLabels) {
  RooflinePlot plot;
  plot.dram_bytes_per_s = 3.35e12;
  plot.roofs.push_back({"bf16_tc", 989e12, true});
  const std::vector<std::string> names = {
      "at::native::elementwise_kernel<direct_copy_kernel_cuda>",
      "at::native::elementwise_kernel<CUDAFunctor_add>",
      "at::native::elementwise_kernel<bfloat16tofloat32_copy_kernel>",
      "at::native::vectorized_elementwise_kernel<4, FillFunctor>",
  };
  double ai = 0.1;
  for (const std::string& n : names) {
    plot.points.push_back(At(ai, ai * 3e12, n));
    ai *= 10;
  }
  const std::string svg = RenderRooflinePlot(plot).value();
  const std::vector<std::string> labels = LabelTexts(svg);
  ASSERT_EQ(labels.size(), names.size()) << svg;
  EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(),
            labels.size());
  for (const std::string& l : labels) {
    EXPECT_LE(l.size(), 30u) << l;
    EXPECT_EQ(l.find("at::native::"), std::string::npos) << l;
  }
  const std::set<std::string> got(labels.begin(), labels.end());
  // A short template argument is kept whole (the kernel's name clipped);
  // a long one is clipped after as much of the name as fits.
  EXPECT_EQ(got, (std::set<std::string>{"elementwis...<CUDAFunctor_add>",
                                        "elementwise_kernel<bfloat16...",
                                        "elementwise_kernel<direct_c...",
                                        "vectorized_...<4, FillFunctor>"}));
  for (const std::string& n : names) {
    std::string escaped;
    for (char c : n) {
      escaped += c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
    }
    EXPECT_NE(svg.find("<title>" + escaped + "</title>"), std::string::npos)
        << n;
  }
}

// Two families whose shortened labels are still equal are numbered.
TEST(RooflineSvgTest, LabelsThatStillCollideAreNumbered) {
  RooflinePlot plot;
  plot.dram_bytes_per_s = 3.35e12;
  plot.points.push_back(At(0.5, 1e12, "ns1::kernel"));
  plot.points.push_back(At(50, 1e14, "ns2::kernel"));
  const std::vector<std::string> labels = LabelTexts(RenderRooflinePlot(plot).value());
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0], "kernel");
  EXPECT_EQ(labels[1], "kernel #2");
}


// hipBLASLt's kernels share their first 45 characters and differ in the
// macro tile: each label shows where its name differs.
TEST(RooflineSvgTest, LongSharedPrefixesShowWhereNamesDiffer) {
  RooflinePlot plot;
  plot.dram_bytes_per_s = 5.3e12;
  plot.points.push_back(At(
      0.5, 1e12,
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1"));
  plot.points.push_back(At(
      50, 1e14,
      "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT320x224x64_MI16x16x1"));
  const std::vector<std::string> labels = LabelTexts(RenderRooflinePlot(plot).value());
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0], "Cijk_Alik_...MT320x224x64_M...");
  EXPECT_EQ(labels[1], "Cijk_Alik_...MT128x256x32_M...");
}

// The communication roofline draws only finite figures (issue 37 item 12,
// as the roofline above): a collective whose message size or bus
// bandwidth is not finite, or a link roof that is not, leaves no "inf" or
// "nan" in the SVG; with no finite collective there is no chart.
TEST(CommsSvgTest, NonFiniteFiguresAreLeftOut) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Report r;
  r.header.roofs.link_bytes_per_s = inf;
  CollectiveRow bad_size, bad_bw, good;
  bad_size.message_bytes = inf;
  bad_size.busbw = 1e11;
  bad_bw.message_bytes = 1 << 20;
  bad_bw.busbw = nan;
  r.collectives = {bad_size, bad_bw};
  EXPECT_EQ(RenderCommsRooflineSvg(r), "");
  good.shape = "all_reduce bf16 bytes=1048576 ranks=8";
  good.message_bytes = 1 << 20;
  good.busbw = 2e11;
  good.count = 3;
  r.collectives.push_back(good);
  const std::string svg = RenderCommsRooflineSvg(r);
  ASSERT_NE(svg.find("class=\"collective\""), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("class=\"link-roof\""), std::string::npos) << svg;
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos;
       at = svg.find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, 1u);
}

}  // namespace
}  // namespace rooftrace
