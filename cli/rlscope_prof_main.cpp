// rlscope-prof: profile a program. The same command as `rlscope prof`.
#include <iostream>

#include "prof_command.h"
#include "rlscope/trace/version.h"

int main(int argc, char** argv) {
  using namespace rlscope;
  CLI::App app{std::string("rlscope-prof: ") + cli::kProfDescription, "rlscope-prof"};
  app.set_version_flag("--version", std::string("rlscope-prof ") + trace::kRlscopeVersion);
  app.prefix_command();
  auto opts = cli::addProfOptions(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "rlscope-prof: error: " << e.what() << " (see `rlscope-prof --help`)\n";
    return 2;
  }
  try {
    return cli::runProf(*opts, app.remaining());
  } catch (const std::exception& e) {
    std::cerr << "rlscope-prof: error: " << e.what() << '\n';
    return 1;
  }
}
