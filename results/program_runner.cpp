#include "program_runner.hpp"

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace ddpscale {
namespace {

// A scratch file that takes a child's stdout or stderr. It is unlinked as soon as it is
// made, so nothing is left behind in the plot directory even if we are killed; the open
// descriptor keeps the data readable. Files rather than pipes: reading two pipes needs
// poll() to avoid a deadlock, and gnuplot's output is small.
class CaptureFile {
 public:
  CaptureFile(const std::string& dir, const std::string& program_name) {
    std::string path = (fs::path(dir) / ("." + program_name + "-capture-XXXXXX")).string();
    fd_ = mkostemp(path.data(), O_CLOEXEC);  // dup2 in the child clears CLOEXEC on 1 and 2
    if (fd_ < 0) {
      throw std::runtime_error("cannot create a scratch file in " + dir + ": " +
                               std::strerror(errno));
    }
    unlink(path.c_str());
  }
  ~CaptureFile() { close(fd_); }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  int fd() const { return fd_; }

  std::string contents() const {
    std::string text;
    char buffer[4096];
    off_t offset = 0;
    for (;;) {
      const ssize_t n = pread(fd_, buffer, sizeof(buffer), offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
      offset += n;
    }
    return text;
  }

 private:
  int fd_ = -1;
};


bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

bool ProgramResult::succeeded() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

std::string ProgramResult::describe_status() const {
  if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "wait status " + std::to_string(wait_status);
}

ProgramResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::string& work_dir) {
  const std::string name = fs::path(program).filename().string();
  CaptureFile out(work_dir, name), err(work_dir, name);
  // Everything the child needs is built before fork: after fork in a possibly threaded
  // process only async-signal-safe calls are allowed (chdir, open, dup2, execv, write).
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot fork to run " + name + ": " + std::strerror(errno));
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (chdir(work_dir.c_str()) == 0 && null_fd >= 0 && dup2(null_fd, 0) >= 0 &&
        dup2(out.fd(), 1) >= 0 && dup2(err.fd(), 2) >= 0) {
      execv(program.c_str(), argv.data());
    }
    const char message[] = "ddpscale: could not start the program\n";
    ssize_t ignored = write(err.fd(), message, sizeof(message) - 1);
    (void)ignored;
    _exit(127);
  }

  ProgramResult result;
  while (waitpid(pid, &result.wait_status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  result.out = out.contents();
  result.err = err.contents();
  return result;
}

std::string first_lines(const std::string& text, size_t max_lines, size_t max_chars) {
  std::istringstream in(text);
  std::string line, kept;
  size_t lines = 0;
  while (lines < max_lines && std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!kept.empty()) kept += '\n';
    kept += line;
    ++lines;
  }
  if (kept.size() > max_chars) kept = kept.substr(0, max_chars) + "...";
  return kept.empty() ? "(no message)" : kept;
}

// ---- Finding and checking gnuplot -------------------------------------------------------

// The same search execvp does, done here so the program found is the one we report and
// run by absolute path. Empty PATH entries (which execvp reads as the current directory)
// are skipped: running a "gnuplot" that happens to sit in the working directory would
// be a surprise.
std::string find_on_path(const std::string& program) {
  const char* path_env = std::getenv("PATH");
  std::string search_path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream entries(search_path);
  std::string entry;
  while (std::getline(entries, entry, ':')) {
    if (entry.empty()) continue;
    const fs::path candidate = fs::path(entry) / program;
    if (is_executable_file(candidate)) {
      std::error_code error;
      const fs::path absolute = fs::absolute(candidate, error);  // we chdir before execv
      return error ? candidate.string() : absolute.string();
    }
  }
  return "";
}

}  // namespace ddpscale
