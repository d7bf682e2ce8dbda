words = open('data/poem.txt').read().split()
open('results/count.txt', 'w').write(str(len(words)))
