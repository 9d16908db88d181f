// Exceptions that map to the CLI's exit codes (DESIGN.md): usage errors exit 2, a missing or
// unusable GPU for what was asked exits 3.
#pragma once

#include <stdexcept>

namespace gpufact {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum ExitCode : int { exit_ok = 0, exit_failures = 1, exit_usage = 2, exit_no_device = 3, exit_interrupted = 130 };

}  // namespace gpufact
