# Drawn by ddpscale. To restyle, edit this file and run `gnuplot phases_mlp_3M.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'phases_mlp_3M.svg'
set title 'mlp@3M: median time per step by phase'
set ylabel 'ms per step'
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7 relative
set key outside right top
set grid ytics
set xtics ('b16 x2' 0, 'b32 x1' 1, 'b64 x2' 2, 'b128 x1' 3, 'b256 x2' 4, 'b512 x1' 5) nomirror
set xrange [-0.6:5.6]
set yrange [0:*]
plot 'phases_mlp_3M.dat' using 1 title 'data', \
     'phases_mlp_3M.dat' using 2 title 'forward', \
     'phases_mlp_3M.dat' using 3 title 'backward', \
     'phases_mlp_3M.dat' using 4 title 'allreduce exposed', \
     'phases_mlp_3M.dat' using 5 title 'optimizer'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'phases_mlp_3M.png'
replot
unset output
