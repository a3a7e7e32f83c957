#include "trainer/command_line/invocation.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

namespace ddpscale {
namespace {

std::string& program_path() {
  static std::string path = "ddpscale";
  return path;
}

// A /proc file of NUL-separated strings (cmdline, environ), as a list; empty when unreadable.
std::vector<std::string> proc_strings(int pid, const char* file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> strings;
  std::string current;
  for (char c : text) {
    if (c != '\0') {
      current += c;
      continue;
    }
    strings.push_back(current);
    current.clear();
  }
  if (!current.empty()) strings.push_back(current);
  return strings;
}

int parent_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  int parent = 0;
  char state = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &parent) != 2) return 0;
  return parent;
}

bool is_launcher(const std::string& program) {
  static const std::set<std::string> launchers = {"mpirun", "mpiexec", "orterun", "prterun"};
  const auto slash = program.rfind('/');
  return launchers.count(slash == std::string::npos ? program : program.substr(slash + 1)) > 0;
}

// The launcher's variables that decide whether and how it runs (root, transports); those
// that mpirun sets for its ranks are not in its own environment.
std::string launcher_environment(int pid) {
  std::string prefix;
  for (const std::string& entry : proc_strings(pid, "environ"))
    if (entry.rfind("OMPI_ALLOW_RUN_AS_ROOT", 0) == 0 || entry.rfind("OMPI_MCA_", 0) == 0)
      prefix += shell_quoted(entry) + " ";
  return prefix;
}

std::string joined_quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : " ") + shell_quoted(word);
  return line;
}

}  // namespace

std::string this_executable() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) throw std::runtime_error(std::string("readlink(/proc/self/exe) failed: ") + std::strerror(errno));
  return std::string(path, static_cast<size_t>(length));
}

void remember_program_path(const std::string& path) { program_path() = path; }

std::string shell_quoted(const std::string& word) {
  static const std::string safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-";
  if (!word.empty() && word.find_first_not_of(safe) == std::string::npos) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string typed_command_line(int argc, char** argv) {
  // argv[0] is "ddpscale <command>": the command is its last word.
  const std::string named = argc > 0 ? argv[0] : "ddpscale";
  const auto space = named.rfind(' ');
  std::vector<std::string> words = {program_path()};
  if (space != std::string::npos) words.push_back(named.substr(space + 1));
  for (int i = 1; i < argc; ++i) words.push_back(argv[i]);
  return joined_quoted(words);
}

std::string launcher_command_line() {
  for (int pid = static_cast<int>(getppid()); pid > 1; pid = parent_of(pid)) {
    const std::vector<std::string> command = proc_strings(pid, "cmdline");
    if (!command.empty() && is_launcher(command.front())) return launcher_environment(pid) + joined_quoted(command);
  }
  return "";
}

std::string launch_command_line(const std::string& typed, int world_size) {
  const std::string launcher = launcher_command_line();
  if (!launcher.empty()) return launcher;
  if (world_size <= 1) return typed;
  return std::string("mpirun ") + (geteuid() == 0 ? "--allow-run-as-root " : "") + "-np " +
         std::to_string(world_size) + " " + typed;
}

}  // namespace ddpscale
