#include <gtest/gtest.h>

#include "tilegemm/config.hpp"

namespace tilegemm {
namespace {

TEST(KernelConfig, PrintsInTheDocumentedForm) {
  KernelConfig c{128, 128, 32, 8, 3, 8, 0, 0};
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8");
  c.warp_m = 64;
  c.warp_n = 32;
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8/wt64x32");
  c.cluster_m = 2;
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8/wt64x32/c2");
  c.cluster_n = 2;
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8/wt64x32/c2x2");
  c.cluster_m = 1;
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8/wt64x32/c1x2");
  c.cluster_n = 1;
  c.schedule = KernelSchedule::ping_pong;
  EXPECT_EQ(to_string(c), "128x128x32/g8/s3/w8/wt64x32/pingpong");
}

TEST(KernelConfig, ParsesWhatItPrints) {
  for (const char* text :
       {"128x128x32/g8/s3/w8", "64x32x16/g1/s2/w4/wt32x32", "16x16x1/g8/s1/w8",
        "128x256x64/g8/s4/w12/wt64x256/c2", "128x128x64/g8/s5/w12/wt128x128/pingpong",
        "64x128x64/g8/s8/w8/wt64x128/c2x2"}) {
    auto c = parse_kernel_config(text);
    ASSERT_TRUE(c) << text;
    EXPECT_EQ(to_string(*c), text);
  }
}

TEST(KernelConfig, FieldsAreOptionalAndInAnyOrder) {
  auto c = parse_kernel_config("64x64x16/w4/g2");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->num_warps, 4);
  EXPECT_EQ(c->group_size_m, 2);
  EXPECT_EQ(c->block_k, 16);
}

TEST(KernelConfig, RejectsMalformedTextWithAMessage) {
  for (const char* text :
       {"", "128x128", "128x128x0", "axbxc", "128x128x32/q3", "128x128x32/g", "128x128x32/g-1",
        "128x128x32/wt64", "128x128x32//w4", "128x128x32/c0", "128x128x32/k2", "128x128x32/ping",
        "128x128x32/c2x", "128x128x32/c2x0", "128x128x32/c2x2x2"}) {
    std::string error;
    EXPECT_FALSE(parse_kernel_config(text, &error)) << text;
    EXPECT_NE(error.find("config '"), std::string::npos) << error;
  }
}

TEST(KernelConfig, SameInstantiationIgnoresGroupSize) {
  auto a = *parse_kernel_config("128x128x16/g8/s2/w8/wt64x32");
  auto b = *parse_kernel_config("128x128x16/g1/s2/w8/wt64x32");
  auto c = *parse_kernel_config("128x128x16/g8/s3/w8/wt64x32");
  EXPECT_TRUE(same_instantiation(a, b));
  EXPECT_FALSE(same_instantiation(a, c));
  // The cluster is part of a compiled config: a kernel lists the clusters it launches with.
  auto d = *parse_kernel_config("128x128x16/g8/s2/w8/wt64x32/c2");
  EXPECT_FALSE(same_instantiation(a, d));
  EXPECT_EQ(parse_kernel_config("128x128x16/g8/s2/w8/wt64x32/c1")->cluster_m, 1);
  EXPECT_FALSE(same_instantiation(d, *parse_kernel_config("128x128x16/g8/s2/w8/wt64x32/c2x2")));
  EXPECT_EQ(parse_kernel_config("128x128x16/g8/s2/w8/wt64x32/c2x2")->cluster_n, 2);
  // So is the schedule, which is never inferred from the warp tile.
  const auto pp = *parse_kernel_config("128x128x64/g8/s5/w12/wt128x128/pingpong");
  EXPECT_EQ(pp.schedule, KernelSchedule::ping_pong);
  const auto coop = *parse_kernel_config("128x128x64/g8/s5/w12/wt128x128");
  EXPECT_EQ(coop.schedule, KernelSchedule::cooperative);
  EXPECT_FALSE(same_instantiation(pp, coop));
}

}  // namespace
}  // namespace tilegemm
