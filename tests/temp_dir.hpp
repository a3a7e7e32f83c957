// A fresh folder per use (mkdtemp: unique even when tests run in parallel), removed
// afterwards unless DDPSCALE_KEEP_TEST_FILES is set, to look at what a test wrote.
#pragma once
#include <ftw.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ddpscale {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ddpscale_test_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    if (std::getenv("DDPSCALE_KEEP_TEST_FILES") != nullptr) {
      std::fprintf(stderr, "kept %s\n", path_.c_str());
      return;
    }
    remove_tree(path_.string());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  // Not std::filesystem::remove_all: PyTorch 2.11's libtorch.so exports its own copy of that
  // symbol, which the dynamic linker binds this call to, and which jumps to address 0 (found
  // on the GPU machine: every test using a TempDir crashed there at its end). nftw is libc's.
  static void remove_tree(const std::string& root) {
    auto remove_entry = [](const char* path, const struct stat*, int, struct FTW*) {
      std::remove(path);  // failures ignored: a leftover temporary folder is harmless
      return 0;
    };
    nftw(root.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }

  std::filesystem::path path_;
};

}  // namespace ddpscale
