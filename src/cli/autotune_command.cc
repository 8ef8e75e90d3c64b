// placeholder
#include "cli/commands.h"
namespace qtune::cli {
void AddAutotuneCommand(CLI::App& app, int* exit_code) {}
}  // namespace qtune::cli
