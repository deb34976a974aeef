// One line saying why a CUPTI call failed, with what the user can do about the common causes.
#pragma once

#include <cupti.h>

#include <string>
#include <string_view>

namespace rlscope::cupti {

// "cuptiSubscribe: CUPTI_ERROR_UNKNOWN (no NVIDIA GPU or driver?)".
std::string describeCuptiError(std::string_view call, CUptiResult result);

}  // namespace rlscope::cupti
