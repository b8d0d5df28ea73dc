// PSI parsing against the real 6.1 capture and the edge cases.
#include <gtest/gtest.h>

#include <cerrno>

#include "fixture.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/psi.hpp"

using namespace harness::kernel;

TEST(Psi, SystemMemoryFromRealCapture) {
  Fs fs(kernel_test::real_root());
  Psi p = read_system_psi(fs, PsiResource::Memory);
  EXPECT_EQ(p.some_total_us(), 14428530u);
  EXPECT_DOUBLE_EQ(p.some.avg10, 73.24);
  EXPECT_DOUBLE_EQ(p.some.avg60, 20.63);
  EXPECT_DOUBLE_EQ(p.some.avg300, 4.68);
  ASSERT_TRUE(p.full.has_value());
  EXPECT_EQ(*p.full_total_us(), 4586402u);
  EXPECT_DOUBLE_EQ(p.full->avg10, 19.31);
}

TEST(Psi, SystemIoAndCpuFromRealCapture) {
  Fs fs(kernel_test::real_root());
  EXPECT_EQ(read_system_psi(fs, PsiResource::Io).some_total_us(), 18081u);
  EXPECT_EQ(*read_system_psi(fs, PsiResource::Io).full_total_us(), 8891u);
  Psi cpu = read_system_psi(fs, PsiResource::Cpu);
  EXPECT_EQ(cpu.some_total_us(), 20464394u);
  ASSERT_TRUE(cpu.full.has_value());  // 6.1 prints a full line (all zero at the root)
  EXPECT_EQ(*cpu.full_total_us(), 0u);
}

TEST(Psi, CgroupMemoryPressureFromRealCapture) {
  Cgroup bg(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/bg");
  Psi p = bg.memory_pressure();
  EXPECT_EQ(p.some_total_us(), 9813973u);
  EXPECT_EQ(*p.full_total_us(), 9813973u);  // single task in bg: some == full
  Cgroup fg(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/fg");
  // cpu and io pressure of fg read to the captured totals (not just "no exception"):
  // cpu.pressure "some ... total=10908341" / "full ... total=10908341", io.pressure all 0.
  Psi cpu = fg.cpu_pressure();
  EXPECT_EQ(cpu.some_total_us(), 10908341u);
  ASSERT_TRUE(cpu.full.has_value());
  EXPECT_EQ(*cpu.full_total_us(), 10908341u);
  Psi io = fg.io_pressure();
  EXPECT_EQ(io.some_total_us(), 0u);
  ASSERT_TRUE(io.full.has_value());
  EXPECT_EQ(*io.full_total_us(), 0u);
}

TEST(Psi, AbsentIsAnIoErrorWithEnoent) {
  Fs fs(kernel_test::edge_root("psi-absent"));
  try {
    read_system_psi(fs, PsiResource::Memory);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(e.err(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("proc/pressure/memory"), std::string::npos);
  }
  Cgroup bg(fs, "sys/fs/cgroup/harness/bg");
  EXPECT_THROW(bg.memory_pressure(), IoError);
  EXPECT_EQ(bg.memory_current_bytes(), 209657856u);  // the rest of the tree still reads
}

TEST(Psi, MalformedTotalNamesFileLineAndField) {
  Fs fs(kernel_test::edge_root("malformed-line"));
  try {
    read_system_psi(fs, PsiResource::Memory);
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "full.total");
    EXPECT_NE(e.file().find("proc/pressure/memory"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("45864o2"), std::string::npos);
  }
}

TEST(Psi, MissingFullLineIsAbsentNotZero) {
  Psi cpu = read_system_psi(Fs(kernel_test::edge_root("key-missing")), PsiResource::Cpu);
  EXPECT_EQ(cpu.some_total_us(), 20464394u);
  EXPECT_FALSE(cpu.full.has_value());
  EXPECT_FALSE(cpu.full_total_us().has_value());
}

TEST(Psi, RejectsMissingSomeAndUnknownKinds) {
  EXPECT_THROW(parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "x"), ParseError);
  EXPECT_THROW(parse_psi("", "x"), ParseError);
  EXPECT_THROW(parse_psi("half avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "x"), ParseError);
  try {
    parse_psi("some avg10=0.00 avg60=0.00 total=5\n", "f");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "some.avg300");
    EXPECT_EQ(e.line(), 1);
  }
}
