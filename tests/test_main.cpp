// The one Catch2 main shared by every test executable. Each build directory's
// tests (and the evoc processes they start) get their own temporary folder,
// so the tests of two checkouts run at once never share scratch directories.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <system_error>

int main(int argc, char **argv) {
#ifdef EVOC_TEST_TMPDIR
  std::error_code ec;
  std::filesystem::create_directories(EVOC_TEST_TMPDIR, ec);
  if (!ec)
    setenv("TMPDIR", EVOC_TEST_TMPDIR, 1);
#endif
  return Catch::Session().run(argc, argv);
}
