# Drawn by ddpscale. To restyle, edit this file and run `gnuplot throughput_lstm.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'throughput_lstm.svg'
set title 'lstm: throughput against batch size (95% CI)'
set xlabel 'batch per rank'
set ylabel 'samples/s (global)'
set key top left
set grid
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set logscale x
set format x '%g'
set xtics (8, 16, 32, 64, 128)
plot 'throughput_lstm.dat' index 0 using 1:2:3:4 with yerrorlines linewidth 1.5 title '1 GPU', \
     'throughput_lstm.dat' index 1 using 1:2:3:4 with yerrorlines linewidth 1.5 title '2 GPUs'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'throughput_lstm.png'
replot
unset output
