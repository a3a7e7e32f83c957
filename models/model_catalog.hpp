// What a study can name: any model's description, the built-in ones in closed form
// (models/catalog/builtin_models.hpp) and your own TorchScript files, which are loaded and
// probed to be counted. No LibTorch in this header, so the planning and CLI code that only
// names and sizes models compiles without it; models/model_registry.hpp builds them.
#pragma once
#include "models/catalog/builtin_models.hpp"

#include <string>

namespace ddpscale {

// A built-in name (describe_builtin_model) or "torchscript:PATH" (torchscript_model.hpp:
// it loads the file). Throws UnknownModelError for an unknown name, TorchScriptError for a
// file that cannot be trained.
ModelDescription describe_model(const std::string& name, const ModelOptions& options);

}  // namespace ddpscale
