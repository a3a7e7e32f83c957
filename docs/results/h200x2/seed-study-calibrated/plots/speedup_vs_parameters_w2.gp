# Drawn by ddpscale. To restyle, edit this file and run `gnuplot speedup_vs_parameters_w2.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'speedup_vs_parameters_w2.svg'
set title 'Speedup of 2 ranks over 1 against model size'
set xlabel 'parameters'
set ylabel 'speedup (95% bootstrap CI)'
set key top left
set grid
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set logscale x
set format x '%g'
set xtics (249290, 258432, 331850, 6885376)
plot 'speedup_vs_parameters_w2.dat' index 0 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 4', \
     'speedup_vs_parameters_w2.dat' index 1 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 8', \
     'speedup_vs_parameters_w2.dat' index 2 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 16', \
     'speedup_vs_parameters_w2.dat' index 3 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 32', \
     'speedup_vs_parameters_w2.dat' index 4 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 64', \
     'speedup_vs_parameters_w2.dat' index 5 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'batch 128', \
     1 with lines dashtype 2 linewidth 1.5 linecolor rgb 'gray40' title 'reference: y = 1'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'speedup_vs_parameters_w2.png'
replot
unset output
