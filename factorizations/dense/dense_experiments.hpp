#pragma once

#include <string>

namespace gpufact {
class Case;
class Registry;
namespace dense {
struct BackwardError;

// volkov08 §6 dense factorizations: fig7 (with the table3 summary), fig10, fig11, accuracy.
void register_dense(Registry& registry);

// True when the running case belongs to volkov08.accuracy: each factorization's case then adds
// its backward error (backward_error.hpp) through add_backward_error.
bool wants_backward_error(const Case& c);
// Where A starts and ends: the case's `data` axis, or for an experiment without one (accuracy)
// host for the hybrid and OpenBLAS, device for the others.
std::string case_data(const Case& c);
// The accuracy metrics of one case: backward_error/max_units (the paper's unit, with its 8800GTX
// value beside for FP32) and backward_error/magma.
void add_backward_error(Case& c, const std::string& factorization, const BackwardError& e);

}  // namespace dense
}  // namespace gpufact
