# Drawn by ddpscale. To restyle, edit this file and run `gnuplot predicted_speedup_mlp_300M__weak_scaling__eager.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'predicted_speedup_mlp_300M__weak_scaling__eager.svg'
set title 'mlp@300M, weak scaling, eager: predicted speedup'
set xlabel 'GPUs (N)'
set ylabel 'speedup over 1 GPU'
set key top left
set grid
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set logscale x
set format x '%g'
set xtics (4, 8, 16, 32)
plot 'predicted_speedup_mlp_300M__weak_scaling__eager.dat' index 0 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 32/GPU', \
     'predicted_speedup_mlp_300M__weak_scaling__eager.dat' index 1 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 128/GPU', \
     'predicted_speedup_mlp_300M__weak_scaling__eager.dat' index 2 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 512/GPU', \
     1 with lines dashtype 2 linewidth 1.5 linecolor rgb 'gray40' title 'reference: y = 1'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'predicted_speedup_mlp_300M__weak_scaling__eager.png'
replot
unset output
