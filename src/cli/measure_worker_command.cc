// placeholder
#include "cli/commands.h"
namespace qtune::cli {
void AddMeasureWorkerCommand(CLI::App& app, int* exit_code) {}
}  // namespace qtune::cli
