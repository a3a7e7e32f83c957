# Drawn by ddpscale. To restyle, edit this file and run `gnuplot answer_speedup.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'answer_speedup.svg'
set title 'Speedup against model size (95% CI), largest batch per model'
set xlabel 'parameters'
set ylabel 'speedup over 1 rank'
set key top left
set grid
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set logscale x
set format x '%g'
set xtics (249290, 258432, 331850, 6885376)
plot 'answer_speedup.dat' index 0 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'gru, 2 ranks', \
     'answer_speedup.dat' index 1 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'lstm, 2 ranks', \
     'answer_speedup.dat' index 2 using 1:2:3:4 with yerrorlines linewidth 1.5 title 'mlp, 2 ranks', \
     1 with lines dashtype 2 linewidth 1.5 linecolor rgb 'gray40' title 'reference: y = 1'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'answer_speedup.png'
replot
unset output
