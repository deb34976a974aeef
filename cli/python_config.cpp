#include "python_config.h"

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace rlscope::cli {

namespace {

bool validModuleName(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

void addModule(std::string name, std::vector<std::string>& out, const std::string& where) {
  if (!validModuleName(name))
    throw std::runtime_error(where + ": '" + name + "' is not a Python module name");
  out.push_back(std::move(name));
}

}  // namespace

void addModuleList(const std::string& list, std::vector<std::string>& out) {
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t comma = list.find(',', at);
    std::string name = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto first = name.find_first_not_of(" \t");
    auto last = name.find_last_not_of(" \t");
    if (first != std::string::npos)
      addModule(name.substr(first, last - first + 1), out, "module list");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
}

void readPythonConfig(const std::string& path, PythonModules& modules) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read Python config " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("Python config " + path + " is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw std::runtime_error("Python config " + path + ": expected an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "backend_modules" || key == "simulator_modules") {
      if (!value.is_array())
        throw std::runtime_error("Python config " + path + ": " + key + " must be a list");
      auto& out = key == "backend_modules" ? modules.backend : modules.simulator;
      for (const auto& m : value) {
        if (!m.is_string())
          throw std::runtime_error("Python config " + path + ": " + key + " must list strings");
        addModule(m.get<std::string>(), out, "Python config " + path);
      }
    } else if (key == "replace_defaults") {
      if (!value.is_boolean())
        throw std::runtime_error("Python config " + path + ": replace_defaults must be true/false");
      modules.replaceDefaults = value.get<bool>();
    } else {
      throw std::runtime_error("Python config " + path + ": unknown key '" + key +
                               "' (backend_modules, simulator_modules, replace_defaults)");
    }
  }
}

}  // namespace rlscope::cli
