# torchscript:PATH models from the command line: files written from C++ (no Python), then
# `ddpscale train` and `ddpscale models` on them; bad inputs exit 2 naming the file.
add_executable(write_torchscript_fixture write_torchscript_fixture.cpp)
target_link_libraries(write_torchscript_fixture PRIVATE ${TORCH_LIBRARIES})
ddpscale_untimed_code(write_torchscript_fixture)
# Links no library of ours, so it names the include root itself.
target_include_directories(write_torchscript_fixture PRIVATE ${PROJECT_SOURCE_DIR})
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

# Files written by scripts/export_model.py (Python with torch; torchvision for resnet18), checked
# by check_exported_torchscript.py: tiny and resnet18 train on 2 ranks with PyTorch's parameter
# counts; ddpscale's float64 parameters after 5 steps equal PyTorch's own torch.optim.SGD/Adam
# training of the same file; a sweep over two of them and its report. The interpreter is the first
# of python3 on PATH and /usr/bin/python3 (Debian's python3-torch belongs to the system one, not
# to a pyenv python3 first on PATH) that imports torch; the checks exit 77 (skipped, saying why)
# only where none does.
if(NOT DEFINED DDPSCALE_TORCH_PYTHON)
  set(ddpscale_torch_python "")
  find_program(ddpscale_path_python3 python3)
  foreach(candidate ${ddpscale_path_python3} /usr/bin/python3)
    if(NOT ddpscale_torch_python AND EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import torch" RESULT_VARIABLE no_torch OUTPUT_QUIET ERROR_QUIET)
      if(no_torch EQUAL 0)
        set(ddpscale_torch_python "${candidate}")
      endif()
    endif()
  endforeach()
  # Only a Python with torch is kept in the cache: without one, the next configure looks
  # again (scripts/run-main.sh configures before scripts/run-tests.sh installs python3-torch).
  if(ddpscale_torch_python)
    set(DDPSCALE_TORCH_PYTHON "${ddpscale_torch_python}" CACHE FILEPATH "Python interpreter that has torch (and torchvision)")
  else()
    set(DDPSCALE_TORCH_PYTHON python3)
    message(STATUS "No Python with torch: the export-script tests will report themselves skipped "
                   "(apt-get install python3-torch python3-torchvision)")
  endif()
endif()

add_executable(torchscript_float64_steps torchscript_float64_steps.cpp)
target_link_libraries(torchscript_float64_steps PRIVATE ddpscale_engine)
# The engine's precompiled torch/torch.h: about 10 s less on 2 cores.
target_precompile_headers(torchscript_float64_steps REUSE_FROM ddpscale_engine)
set(DDPSCALE_TS_CHECK ${DDPSCALE_TORCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_exported_torchscript.py
    --export-script ${PROJECT_SOURCE_DIR}/scripts/export_model.py --ddpscale $<TARGET_FILE:ddpscale>
    --float64-steps $<TARGET_FILE:torchscript_float64_steps> --mpirun "${DDPSCALE_MPIRUN_STRING}")
foreach(check train pytorch-reference batchnorm sweep)
  add_test(NAME torchscript_export_${check}
           COMMAND ${DDPSCALE_TS_CHECK} ${check} --work ${CMAKE_CURRENT_BINARY_DIR}/torchscript_export/${check})
  set_tests_properties(torchscript_export_${check} PROPERTIES LABELS "mpi" TIMEOUT 300 SKIP_RETURN_CODE 77
                       PASS_REGULAR_EXPRESSION "PASSED: ${check}"
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
