# Drawn by ddpscale. To restyle, edit this file and run `gnuplot phases_gru.gp` in its directory.
set encoding utf8
set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced
set output 'phases_gru.svg'
set title 'gru: median time per step by phase'
set ylabel 'ms per step'
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7 relative
set key outside right top
set grid ytics
set xtics ('b8 x1' 0, 'b8 x2' 1, 'b16 x1' 2, 'b16 x2' 3, 'b32 x1' 4, 'b32 x2' 5, 'b64 x1' 6, 'b64 x2' 7, 'b128 x1' 8, 'b128 x2' 9) nomirror rotate by 45 right
set xrange [-0.6:9.6]
set yrange [0:*]
plot 'phases_gru.dat' using 1 title 'data', \
     'phases_gru.dat' using 2 title 'forward', \
     'phases_gru.dat' using 3 title 'backward', \
     'phases_gru.dat' using 4 title 'allreduce exposed', \
     'phases_gru.dat' using 5 title 'optimizer'
set terminal pngcairo size 1000,625 font 'sans,12' background rgb 'white' noenhanced
set output 'phases_gru.png'
replot
unset output
