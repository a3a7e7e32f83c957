// An --out that cannot be a folder is refused before any work, by the file system alone
// (process/cli_util.hpp: output_folder_refusal), with a message naming the path and a fix.
#include "tests/temp_dir.hpp"
#include "trainer/command_line/cli_util.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ddpscale {
namespace {

void touch(const std::string& path) { std::ofstream(path) << "not a folder\n"; }

TEST(OutputFolder, AFolderOrAPathStillToMakeIsAccepted) {
  TempDir dir;
  EXPECT_EQ(output_folder_refusal("--out", dir.str()), "");
  EXPECT_EQ(output_folder_refusal("--out", dir / "new/deeper"), "");
  EXPECT_EQ(output_folder_refusal("--out", dir.str() + "/"), "");
}

TEST(OutputFolder, AnExistingFileIsRefusedByNameWithTheFix) {
  TempDir dir;
  const std::string file = dir / "afile";
  touch(file);
  const std::string refusal = output_folder_refusal("--out", file);
  EXPECT_EQ(refusal, "--out " + file + " is a file, not a folder: give a folder to write into (it is created where "
                     "missing), or move " + file + " away; nothing was run");
  // A trailing slash names the same file.
  EXPECT_EQ(output_folder_refusal("--out", file + "/").rfind("--out " + file + "/ is a file, not a folder", 0), 0u);
}

TEST(OutputFolder, AFileAboveThePathIsNamed) {
  TempDir dir;
  const std::string file = dir / "afile";
  touch(file);
  EXPECT_EQ(output_folder_refusal("--out", file + "/report"),
            "--out " + file + "/report: " + file + " is a file, so no folder can be made below it: give another "
            "--out, or move " + file + " away; nothing was run");
  EXPECT_THROW(require_output_folder("--out", file + "/report"), UsageError);
  EXPECT_NO_THROW(require_output_folder("--out", dir / "fine"));
}

}  // namespace
}  // namespace ddpscale
