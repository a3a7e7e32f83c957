// Writes the TorchScript files the CLI tests train (torchscript_tests.cmake) into a folder:
// mlp.pt (16 -> 8 -> 4), own_loss.pt (the same with a loss method), counter.pt (with an
// int64 buffer), tokens.pt (ids [batch, 7] in [0, 50) -> logits [batch, 7, 5]) and
// notes.pt (not TorchScript).
#include "tests/torchscript_fixtures.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_torchscript_fixture FOLDER\n";
    return 2;
  }
  using namespace ddpscale::testing_fixtures;
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  write_mlp((dir / "mlp.pt").string());
  write_mlp((dir / "own_loss.pt").string(), mlp_with(&MlpFile::own_loss, true));
  write_mlp((dir / "counter.pt").string(), mlp_with(&MlpFile::step_counter, true));
  write_token_model((dir / "tokens.pt").string(), 50, 6, 5);
  std::ofstream(dir / "notes.pt") << "not a model\n";
  return 0;
}
