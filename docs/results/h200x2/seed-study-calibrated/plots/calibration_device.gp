# Drawn by ddpscale. To restyle, edit this file and run `gnuplot calibration_device.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'calibration_device.svg'
set title 'Device-launch calibration over the study'
set xlabel 'minutes since the study'."'".'s first run'
set ylabel 'us (rank 0)'
set key top left
set grid
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
plot 'calibration_device.dat' index 0 using 1:2 with linespoints linewidth 1.5 title '1 rank', \
     'calibration_device.dat' index 1 using 1:2 with linespoints linewidth 1.5 title '2 ranks'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'calibration_device.png'
replot
unset output
