# torchscript:PATH models from the command line: files written from C++ (no Python), then
# `ddpscale train` and `ddpscale models` on them; bad inputs exit 2 naming the file.
add_executable(write_torchscript_fixture write_torchscript_fixture.cpp)
target_link_libraries(write_torchscript_fixture PRIVATE ${TORCH_LIBRARIES})
set(DDPSCALE_TS_DIR ${CMAKE_CURRENT_BINARY_DIR}/torchscript_files)
add_test(NAME torchscript_files COMMAND $<TARGET_FILE:write_torchscript_fixture> ${DDPSCALE_TS_DIR})
set_tests_properties(torchscript_files PROPERTIES LABELS unit TIMEOUT 60 FIXTURES_SETUP torchscript_files)

# name, expected output (regular expression), then the command
function(ddpscale_torchscript_test name pass)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED torchscript_files
                       PASS_REGULAR_EXPRESSION "${pass}"
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endfunction()
set(DDPSCALE_TS_TRAIN $<TARGET_FILE:ddpscale> train --runs 2 --warmup 1 --steps 3 --device cpu -b 4)
ddpscale_torchscript_test(torchscript_train_2ranks "mlp \\(172 parameters\\), 2 rank.*2 of 2 runs ok"
  ${DDPSCALE_MPIRUN} -np 2 ${DDPSCALE_TS_TRAIN} --model torchscript:${DDPSCALE_TS_DIR}/mlp.pt --input-shape 16 --classes 4)
ddpscale_torchscript_test(torchscript_train_own_loss "own_loss \\(172 parameters\\).*2 of 2 runs ok"
  ${DDPSCALE_MPIRUN} -np 2 ${DDPSCALE_TS_TRAIN} --model torchscript:${DDPSCALE_TS_DIR}/own_loss.pt --input-shape 16)
ddpscale_torchscript_test(torchscript_train_buffers "counter \\(172 parameters\\).*2 of 2 runs ok"
  ${DDPSCALE_MPIRUN} -np 2 ${DDPSCALE_TS_TRAIN} --model torchscript:${DDPSCALE_TS_DIR}/counter.pt --input-shape 16)
ddpscale_torchscript_test(torchscript_train_tokens "tokens \\(335 parameters\\).*2 of 2 runs ok"
  ${DDPSCALE_MPIRUN} -np 2 ${DDPSCALE_TS_TRAIN} --model torchscript:${DDPSCALE_TS_DIR}/tokens.pt --input tokens:50:7)
set_tests_properties(torchscript_train_2ranks torchscript_train_own_loss torchscript_train_buffers
                     torchscript_train_tokens PROPERTIES LABELS "mpi")
ddpscale_torchscript_test(torchscript_models "mlp +172 .*output \\[3, 4\\]"
  $<TARGET_FILE:ddpscale> models torchscript:${DDPSCALE_TS_DIR}/mlp.pt --input-shape 16)
ddpscale_torchscript_test(torchscript_not_torchscript "notes.pt: not a TorchScript file"
  $<TARGET_FILE:ddpscale> train --device cpu --runs 1 --model torchscript:${DDPSCALE_TS_DIR}/notes.pt --input-shape 16)
ddpscale_torchscript_test(torchscript_wrong_input "mlp.pt: forward failed on the declared input float \\[3, 5\\]"
  ${DDPSCALE_MPIRUN} -np 2 $<TARGET_FILE:ddpscale> train --device cpu --runs 1 --model torchscript:${DDPSCALE_TS_DIR}/mlp.pt --input-shape 5)
set_tests_properties(torchscript_models torchscript_not_torchscript torchscript_wrong_input PROPERTIES LABELS unit)
