// rlscope-prof: profile a program. The same command as `rlscope prof`.
#include "prof_command.h"

int main(int argc, char** argv) {
  return rlscope::cli::profMain("rlscope-prof", argc, argv);
}
