// Build facts stamped by cmake/build_info.cmake at build time (git revision re-read every build).
#pragma once

#define GPUFACT_VERSION "0.1.0"

namespace gpufact::build {
extern const char* const git_sha;
extern const bool git_dirty;
extern const char* const build_type;
extern const char* const cuda_architectures;
extern const char* const cxx_compiler;
extern const char* const cuda_compiler;
}  // namespace gpufact::build
