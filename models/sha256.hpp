// SHA-256 (FIPS 180-4) of bytes and of files, in plain C++: the TorchScript files a study
// trains are identified by it (ConfigParams::model_sha256), on every machine alike, without
// depending on a crypto library the GPU image may lack.
#pragma once
#include <string>

namespace ddpscale {

// Lower-case hex, 64 characters.
std::string sha256_hex(const std::string& bytes);
// Reads the file in blocks; throws std::runtime_error naming the file when it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace ddpscale
