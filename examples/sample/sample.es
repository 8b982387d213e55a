en el primer tratado , oh teófilo , he hablado de todas las cosas que jesús comenzó á hacer y á enseñar ,
hasta el día en que , habiendo dado mandamientos por el espíritu santo á los apóstoles que escogió , fué recibido arriba ;
a los cuales , después de haber padecido , se presentó vivo con muchas pruebas indubitables , apareciéndoles por cuarenta días , y hablándoles del reino de dios .
y estando juntos , les mandó que no se fuesen de jerusalem , sino que esperasen la promesa del padre , que oísteis , dijo , de mí .
porque juan á la verdad bautizó con agua , mas vosotros seréis bautizados con el espíritu santo no muchos días después de estos .
entonces los que se habían juntado le preguntaron , diciendo : señor , ¿ restituirás el reino á israel en este tiempo ?
y les dijo : no toca á vosotros saber los tiempos ó las sazones que el padre puso en su sola potestad ;
mas recibiréis la virtud del espíritu santo que vendrá sobre vosotros ; y me sereís testigos en jerusalem , y en toda judea , y samaria , y hasta lo último de la tierra .
y habiendo dicho estas cosas , viéndolo ellos , fué alzado ; y una nube le recibió y le quitó de sus ojos .
y estando con los ojos puestos en el cielo , entre tanto que él iba , he aquí dos varones se pusieron junto á ellos en vestidos blancos ;
